import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A host an attacker owns, for tests of where secrets go: it answers every request with one
 * `rest-json` record that echoes the request's headers back (as an API that reflects its request
 * does: httpbin's `/headers`, many debug endpoints), and remembers every header it was sent.
 */
export interface Listener {
  readonly url: string;
  /** Every request's headers, in arrival order. */
  readonly received: IncomingHttpHeaders[];
  /** Every request's path and query, in arrival order. */
  readonly paths: string[];
  /** True when any header of any request contained `secret`. */
  saw(secret: string): boolean;
  stop(): Promise<void>;
}

/**
 * Starts a {@link Listener} on 127.0.0.1: on `port` when given (chosen up front with
 * {@link freePorts}, so an engine's config can name its origin before it starts), else on a
 * fresh one. Either way it is an origin of its own.
 */
export async function startListener(port = 0): Promise<Listener> {
  const received: IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const server = createServer((request, response) => {
    received.push(request.headers);
    paths.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        data: [{ id: 'echo-1', updatedAt: '2024-01-01T00:00:00.000Z', headers: request.headers }],
        next_cursor: null,
        total: 1,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    received,
    paths,
    saw: (secret) => received.some((headers) => JSON.stringify(headers).includes(secret)),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export { freePorts } from '../../tools/fake-source/ports.js';
