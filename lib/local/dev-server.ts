import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ApiDeps } from '../api/deps.js';
import { PayloadTooLargeError } from '../api/errors.js';
import { apiGatewayEvent } from '../api/event.js';
import { handleApiRequest } from '../api/handler.js';
import { MAX_BODY_BYTES } from '../api/request.js';
import { errorResponse } from '../api/response.js';
import { serveConsole } from '../console/assets.js';
import { listenOnLoopback } from '../console/loopback.js';

/**
 * The admin API on a local port: each HTTP request becomes the API Gateway v2 event the Lambda
 * would receive, answered by the same {@link handleApiRequest}. It listens on loopback only and
 * has no authentication — it is for a developer's machine, like the emulator behind it. Because
 * anything on that machine can reach loopback, a browser included, it answers only requests
 * addressed to itself ({@link ownHost}) and not sent by another site's page ({@link crossSiteRefusal}),
 * and it sends no CORS headers: a page elsewhere can neither read an answer nor, by a form or a
 * `fetch` with `mode: 'no-cors'`, pause or delete a source. It also serves the console's page at
 * `/` (lib/console/), which calls the API under `/api/`.
 */

/** Options of {@link startDevServer}. */
export interface DevServerOptions {
  readonly deps: ApiDeps;
  /** Port on 127.0.0.1. Default 0: a free port. */
  readonly port?: number;
}

/** A running dev server. */
export interface DevServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Closes the server and its connections. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Most bytes drained (read and discarded) after the 413 is sent, so the client finishes writing
 * and reads the answer instead of seeing its connection reset. A client that keeps sending past
 * this is abusive and is cut off.
 */
const DRAIN_LIMIT_BYTES = 256 * 1024 * 1024;

/**
 * Reads a body up to the API's limit. Past it (declared or counted), resolves at once with a
 * {@link PayloadTooLargeError} so the 413 goes out while the rest is drained, unbuffered.
 */
function readBody(req: IncomingMessage): Promise<Buffer | PayloadTooLargeError> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = () => {
      refused = true;
      chunks.length = 0;
      resolve(new PayloadTooLargeError(MAX_BODY_BYTES));
    };
    if (declared > MAX_BODY_BYTES) refuse();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES + DRAIN_LIMIT_BYTES) req.destroy();
      else if (refused) return;
      else if (size > MAX_BODY_BYTES) refuse();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      if (!refused) reject(error);
    });
  });
}

function send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
  res.end(result.body ?? '');
}

/** True when `host` (a Host header) names this server: 127.0.0.1, localhost or [::1] at its port. */
export function ownHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

/**
 * Why a request is refused as cross-site, or undefined when it may be answered. Browsers say who
 * sent a request: `Sec-Fetch-Site` (`same-origin`, or `none` when a person typed the URL) and
 * `Origin` (on every POST, PUT and DELETE a page sends). A request from another site, or from
 * another port of this host (`same-site`: a different dev server), is refused; a request with
 * neither header (the CLI, curl, the tests) is a program, not a page, and is answered.
 */
export function crossSiteRefusal(headers: IncomingMessage['headers'], port: number): string | undefined {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return `a ${site} request (Sec-Fetch-Site) is not answered: the dev server serves this machine's programs only`;
  const origin = headers.origin;
  if (origin !== undefined && !ownHost(/^http:\/\/([^/]+)$/.exec(origin)?.[1], port))
    return `a request from ${origin} (Origin) is not answered: the dev server serves this machine's programs only`;
  return undefined;
}

function forbidden(res: ServerResponse, detail: string, path: string, requestId: string): void {
  const body = { type: 'about:blank', title: 'Forbidden', status: 403, detail, instance: path, requestId };
  res.writeHead(403, { 'content-type': 'application/problem+json', connection: 'close' });
  res.end(JSON.stringify(body));
}

/** Starts the dev server on 127.0.0.1; it answers only requests whose Host names it, from no other site. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const { deps } = options;
  let port = 0;
  const server: Server = createServer((req, res) => {
    const requestId = randomUUID();
    if (!ownHost(req.headers.host, port)) {
      // DNS rebinding: a web page whose name now resolves to 127.0.0.1 reaches this server with its
      // own name in Host. Only requests addressed to the server itself are answered.
      res.writeHead(421, { 'content-type': 'text/plain', connection: 'close' });
      res.end('misdirected request: Host must be this server (127.0.0.1 or localhost)\n');
      return;
    }
    const crossSite = crossSiteRefusal(req.headers, port);
    if (crossSite) return forbidden(res, crossSite, (req.url ?? '/').split('?')[0]!, requestId);
    // The console's page calls the API under /api/, as it does through `harvester console`.
    if (req.url?.startsWith('/api/')) req.url = req.url.slice('/api'.length);
    serveConsole(req.method ?? 'GET', (req.url ?? '/').split('?')[0]!, res)
      .then((served) => (served ? undefined : readBody(req)))
      .then(async (body) => {
        if (body === undefined) return;
        if (body instanceof PayloadTooLargeError) {
          res.setHeader('connection', 'close');
          const request = { method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0]!, requestId };
          return send(res, errorResponse(body, request, deps.logger));
        }
        const event = apiGatewayEvent({
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          headers: req.headers,
          body,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          requestId,
        });
        send(res, await handleApiRequest(event, deps));
      })
      .catch((error: unknown) => {
        const request = { method: req.method ?? 'GET', path: req.url ?? '/', requestId };
        if (!res.headersSent) send(res, errorResponse(error, request, deps.logger));
        else res.destroy();
      });
  });
  const listening = await listenOnLoopback(server, options.port);
  port = listening.port;
  return listening;
}
