import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * The CLI's HTTP transport: node:http(s) rather than the global `fetch`. Node loads and compiles
 * undici on the first `fetch`, which costs ~0.3 s on every CLI start — more than the rest of
 * `harvester runs get` together. The admin API needs nothing fetch adds.
 */

/** What the client reads from a response. */
export interface HttpAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** Sends one request. Network failures reject with an error whose `cause.code` names them. */
export type HttpSend = (
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<HttpAnswer>;

/** {@link HttpSend} over node:http / node:https. */
export const nodeHttpSend: HttpSend = (url, init) =>
  new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: init.method, headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error) => reject(new Error('the response was cut off', { cause: error })));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        resolve({
          status,
          statusText: res.statusMessage ?? '',
          ok: status >= 200 && status < 300,
          headers: {
            get: (name) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
            },
          },
          text: async () => body,
        });
      });
    });
    req.on('error', (error) => reject(new Error('the request failed', { cause: error })));
    req.end(init.body);
  });

/** Adapts a `fetch` (tests pass fakes) to {@link HttpSend}. */
export function fetchSend(fetchFn: typeof fetch): HttpSend {
  return (url, init) => fetchFn(url, init);
}
