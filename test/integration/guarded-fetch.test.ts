import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectLookup, guardedFetch } from '../../lib/connectors/guarded-fetch.js';
import { type SourcePolicy, STRICT_SOURCE_POLICY } from '../../lib/connectors/url-policy.js';
import { ClassifiedError } from '../../lib/retry/errors.js';

/**
 * The worker's fetch against a real local server. Names are resolved by a fake resolver plugged
 * into the connection itself, so the test can play DNS answers (a name that points at loopback
 * or at the metadata service) without a DNS server.
 */

let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    if (req.url === '/moved') return void res.writeHead(302, { location: '/' }).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** A resolver: `rebind.test` → loopback (where the server is), `mixed.test` → loopback and metadata. */
const resolver: ConnectLookup = (hostname, _options, callback) => {
  const table: Record<string, string[]> = {
    'rebind.test': ['127.0.0.1'],
    'mixed.test': ['127.0.0.1', '169.254.169.254'],
  };
  const addresses = table[hostname];
  if (!addresses)
    return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
  return callback(
    null,
    addresses.map((address) => ({ address, family: 4 })),
  );
};

const LOCAL: SourcePolicy = { ...STRICT_SOURCE_POLICY, allowLoopback: true, allowPrivate: true };

async function attempt(policy: SourcePolicy, url: string) {
  const before = hits;
  const result = await guardedFetch(policy, { connectLookup: resolver })(url).then(
    (response) => ({ status: response.status }),
    (error: unknown) => ({ error }),
  );
  return { result, reached: hits - before };
}

describe('guardedFetch', () => {
  it('refuses at connection time a name that resolves to a refused address, as a permanent error', async () => {
    const { result, reached } = await attempt(STRICT_SOURCE_POLICY, `http://rebind.test:${port}/records`);
    expect(reached).toBe(0);
    expect('error' in result && result.error).toBeInstanceOf(ClassifiedError);
    expect(result).toMatchObject({ error: { errorClass: 'permanent' } });
    expect(String((result as { error: Error }).error.message)).toContain('loopback');
  });

  it('connects when the policy allows the address (a local stack and its loopback fake source)', async () => {
    const { result, reached } = await attempt(LOCAL, `http://rebind.test:${port}/records`);
    expect(result).toEqual({ status: 200 });
    expect(reached).toBe(1);
  });

  it('refuses a host when any of its addresses is the metadata service, even locally', async () => {
    const { result, reached } = await attempt(LOCAL, `http://mixed.test:${port}/`);
    expect(reached).toBe(0);
    expect(String((result as { error: Error }).error.message)).toContain('metadata');
  });

  it('refuses IP-literal hosts before any connection, in their mapped spelling too', async () => {
    const { result, reached } = await attempt(STRICT_SOURCE_POLICY, `http://[::ffff:7f00:1]:${port}/`);
    expect(reached).toBe(0);
    expect(result).toMatchObject({ error: { errorClass: 'permanent' } });
  });

  it('answers a redirect as is unless the caller asks to follow it', async () => {
    const fetchFn = guardedFetch(LOCAL, { connectLookup: resolver });
    const url = `http://rebind.test:${port}/moved`;
    expect((await fetchFn(url)).status).toBe(302);
    expect((await fetchFn(url, { redirect: 'follow' })).status).toBe(200);
  });
});
