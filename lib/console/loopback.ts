import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on 127.0.0.1, as the console and the local API serve. */
export interface LoopbackServer {
  readonly url: string;
  readonly port: number;
  /** Closes the server and every open connection; the same promise on every call. */
  stop(): Promise<void>;
}

/** Starts `server` on 127.0.0.1 (port 0: a free one) and says where it listens. */
export async function listenOnLoopback(server: Server, port = 0): Promise<LoopbackServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    stop() {
      stopped ??= new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}
