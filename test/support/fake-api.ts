import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake API received. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

/** What a route answers: a status and a JSON body (problem+json when `problem`). */
export interface FakeAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly problem?: boolean;
}

/**
 * A stand-in for the admin API on 127.0.0.1, for CLI unit tests that care about what the CLI
 * sends and prints, not about the engine: routes are `"METHOD /path"` → answer.
 */
export interface FakeApi {
  readonly url: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** A route's answer: fixed, or chosen per request (from its body, say, or how many came before). */
export type FakeRoute = FakeAnswer | ((request: SeenRequest) => FakeAnswer);

/** Starts a fake API answering `routes` (anything else: 404 problem). */
export async function startFakeApi(routes: Record<string, FakeRoute>): Promise<FakeApi> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const request = { method: req.method ?? '', path: req.url ?? '/', body: await bodyOf(req) };
    seen.push(request);
    const route = routes[`${req.method} ${path}`];
    const answer = (typeof route === 'function' ? route(request) : route) ?? {
      status: 404,
      problem: true,
      body: { type: 'about:blank', title: 'Not found', status: 404, detail: `${req.method} ${path}` },
    };
    res.writeHead(answer.status, {
      'content-type': answer.problem ? 'application/problem+json' : 'application/json',
    });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
