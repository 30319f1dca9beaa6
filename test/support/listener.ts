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

/** A host that takes its time: see {@link startSlowHost}. */
export interface SlowHost {
  readonly url: string;
  /** Requests that arrived (each is answered only after the delay, or never if stopped first). */
  readonly requests: () => number;
  stop(): Promise<void>;
}

/**
 * Starts a host on 127.0.0.1 that accepts every request and answers it (one `rest-json` page)
 * only after `delayMs`: a source that hangs, for tests of what a caller's own bound does.
 * `stop` cuts the connections still waiting.
 */
export async function startSlowHost(delayMs: number): Promise<SlowHost> {
  let requests = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((_request, response) => {
    requests++;
    const timer = setTimeout(() => {
      timers.delete(timer);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ data: [], next_cursor: null, total: 0 }));
    }, delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    stop: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export { freePorts } from '../../tools/fake-source/ports.js';
