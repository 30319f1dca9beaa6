import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJson } from '../../lib/connectors/http.js';

/*
 * A request's timeout holds whatever the garbage collector does: a body that trickles one byte a
 * second is cut at the timeout, with major collections forced all along. (`AbortSignal.timeout`
 * combined through `AbortSignal.any` stopped aborting after a major GC on Node 20.)
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: Server;
let url: string;
const sockets = new Set<import('node:net').Socket>();

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"data":[');
    const timer = setInterval(() => response.write(' '), 1_000);
    response.on('close', () => clearInterval(timer));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/records`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('a request to a source whose body trickles', () => {
  it.each([
    ['alone', undefined],
    ['with an outer signal', new AbortController().signal],
  ])(
    'times out %s, under forced major GCs',
    async (_how, signal) => {
      const collector = setInterval(gc, 20);
      const started = Date.now();
      try {
        const error = await fetchJson(fetch, url, { timeoutMs: 1_500, ...(signal ? { signal } : {}) }).catch(
          (e: unknown) => e,
        );
        expect((error as Error).name).toBe('TimeoutError');
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        clearInterval(collector);
      }
    },
    20_000,
  );

  it('stops at once when the outer signal aborts', async () => {
    const outer = new AbortController();
    setTimeout(() => outer.abort(), 200);

    const error = await fetchJson(fetch, url, { timeoutMs: 10_000, signal: outer.signal }).catch(
      (e: unknown) => e,
    );

    expect((error as Error).name).toBe('AbortError');
  });
});
