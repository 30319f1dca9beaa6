import { request } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import { setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

let aws: TestAws;
let server: DevServer;

beforeAll(async () => {
  const api = await setUpTestApi('api-dev');
  aws = api.aws;
  server = await startDevServer({ deps: api.deps });
});
afterAll(async () => {
  await server.stop();
  destroyAwsClients(aws.clients);
});

const CONFIG = {
  url: 'http://127.0.0.1:9/records',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'page' },
};

describe('the local dev server', () => {
  it('answers only requests whose Host names it: a DNS-rebound web page is refused', async () => {
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}/sources`, { headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await status(`attacker.example:${server.port}`)).toBe(421);
    expect(await status(`127.0.0.1:${server.port}`)).toBe(200);
    expect(await status(`localhost:${server.port}`)).toBe(200);
  });

  it.each([
    [{ origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' }, 403],
    [{ origin: 'https://attacker.example' }, 403],
    [{ 'sec-fetch-site': 'cross-site' }, 403],
    [{ 'sec-fetch-site': 'same-site', origin: 'http://localhost:1' }, 403],
    [{ origin: 'null' }, 403],
    [{ origin: 'http://127.0.0.1:1' }, 403],
    [{ 'sec-fetch-site': 'same-origin', origin: 'SELF' }, 200],
    [{ 'sec-fetch-site': 'none' }, 200],
    [{}, 200],
  ])('a pause sent with %o answers %i, with no CORS headers', async (headers, status) => {
    await fetch(`${server.url}/sources/dev-x`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ connector: 'rest-json', config: CONFIG }),
    });
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value === 'SELF' ? server.url : value]),
    );
    const res = await rawPost(`${server.url}/sources/dev-x/pause`, sent);
    expect(res.status).toBe(status);
    expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const source = (await (await fetch(`${server.url}/sources/dev-x`)).json()) as { paused?: boolean };
    expect(source.paused ?? false).toBe(status === 200);
    if (status === 200) await rawPost(`${server.url}/sources/dev-x/resume`, {});
  });

  it('listens on loopback and answers the API over HTTP', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const put = await fetch(`${server.url}/sources/dev-a`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ connector: 'rest-json', config: CONFIG }),
    });
    expect(put.status).toBe(201);
    const list = await fetch(`${server.url}/sources?limit=10`);
    expect(list.headers.get('content-type')).toBe('application/json');
    const page = (await list.json()) as { items: { sourceId: string }[] };
    expect(page.items.map((s) => s.sourceId)).toContain('dev-a');
  });

  it('refuses a declared body over 64 KB with 413 without storing anything', async () => {
    const res = await fetch(`${server.url}/sources/dev-big`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        connector: 'rest-json',
        config: { ...CONFIG, extraQuery: { pad: 'x'.repeat(100_000) } },
      }),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect((await fetch(`${server.url}/sources/dev-big`)).status).toBe(404);
  });

  it('stops buffering a streamed (chunked) body once it passes 64 KB', async () => {
    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(8 * 1024, 0x20));
    const res = await fetch(`${server.url}/sources/dev-stream`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: Readable.toWeb(Readable.from(chunks)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it.each([2, 8, 32])(
    'answers 413 (not a reset connection) to a %i MB body, declared or streamed',
    async (megabytes) => {
      const body = Buffer.alloc(megabytes * 1024 * 1024, 0x20);
      const declared = await fetch(`${server.url}/sources/dev-huge`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(declared.status).toBe(413);
      expect(((await declared.json()) as { title: string }).title).toBe('Content Too Large');
      const chunks = Array.from({ length: megabytes * 16 }, () => Buffer.alloc(64 * 1024, 0x20));
      const streamed = await fetch(`${server.url}/sources/dev-huge`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: Readable.toWeb(Readable.from(chunks)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      expect(streamed.status).toBe(413);
      expect((await fetch(`${server.url}/sources/dev-huge`)).status).toBe(404);
    },
  );

  it('passes the query string, headers and method through to the handler', async () => {
    const res = await fetch(`${server.url}/sources?limit=0`);
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { path: string }[] };
    expect(problem.errors[0]?.path).toBe('limit');
    const wrong = await fetch(`${server.url}/sources`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });
});

/** A POST with exactly these headers (Node's `fetch` refuses to set `Origin` and `Sec-Fetch-*`). */
function rawPost(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
    });
    req.on('error', reject);
    req.end();
  });
}
