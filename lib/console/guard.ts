import type { IncomingHttpHeaders } from 'node:http';

/**
 * Who may talk to a console server. It listens on loopback, where any page the user's browser
 * opens can reach it too, so it answers only requests addressed to itself (a DNS-rebinding page
 * names its own host) and not sent by another site. Reads may come from a program (curl, a test:
 * neither header); anything that changes state must come from the console's own page.
 */

/** True when `host` (a Host header) names the server at `port`: 127.0.0.1, localhost or [::1]. */
export function ownHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

/** True when an Origin header is this server's own origin. */
function ownOrigin(origin: string | undefined, port: number): boolean {
  return origin !== undefined && ownHost(/^http:\/\/([^/]+)$/.exec(origin)?.[1], port);
}

/** Methods that change nothing, which a program without browser headers may send. */
const READS = new Set(['GET', 'HEAD']);

/**
 * Why a request is refused, or undefined when it may be answered. `Sec-Fetch-Site` other than
 * `same-origin` or `none` (typed into the address bar) is refused, as is an `Origin` that is not
 * this server's; a POST, PUT or DELETE must carry proof it came from the console's page
 * (`Sec-Fetch-Site: same-origin`, or its own `Origin`), since a form on another site can send a
 * POST that, in an older browser, carries neither.
 */
export function consoleRefusal(
  method: string,
  headers: IncomingHttpHeaders,
  port: number,
): string | undefined {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return `a ${site} request (Sec-Fetch-Site) is not answered: the console serves its own page only`;
  const origin = headers.origin;
  if (origin !== undefined && !ownOrigin(origin, port))
    return `a request from ${origin} (Origin) is not answered: the console serves its own page only`;
  if (!READS.has(method.toUpperCase()) && site !== 'same-origin' && !ownOrigin(origin, port))
    return `a ${method} must come from the console's own page (Sec-Fetch-Site: same-origin or its Origin)`;
  return undefined;
}
