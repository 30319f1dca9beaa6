import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `n` distinct ports free on 127.0.0.1 right now, for fake sources whose origin must be known
 * before they start (a shared secret is bound to explicit origins when the stack is configured).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
