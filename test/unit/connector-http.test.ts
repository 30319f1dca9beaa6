import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJson, MAX_BODY_EXCERPT_BYTES, sameOriginUrl } from '../../lib/connectors/http.js';
import { classifyDefault } from '../../lib/retry/classify.js';
import { SourceHttpError, SourceResponseError } from '../../lib/retry/errors.js';

const URL_ = 'https://api.example.com/v1/items?page=2';

/** A fetch that answers every request with `respond()` and never touches the network. */
function answering(respond: () => Response): typeof fetch {
  return (async () => respond()) as typeof fetch;
}

/** A fetch that never answers, only rejects when its signal aborts (a hung source). */
const hanging = ((_input: unknown, init?: RequestInit) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
  })) as typeof fetch;

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('fetchJson', () => {
  it('returns the parsed body, status, url and lower-cased headers of a 2xx response', async () => {
    const fetchFn = answering(() => Response.json([1, 2], { headers: { 'X-Total-Count': '2' } }));
    const response = await fetchJson(fetchFn, URL_);
    expect(response).toMatchObject({ body: [1, 2], status: 200, url: URL_ });
    expect(response.headers['x-total-count']).toBe('2');
  });

  it('throws a SourceHttpError carrying status, headers and a body excerpt for a non-2xx status', async () => {
    const fetchFn = answering(
      () => new Response('{"message":"Not Found"}', { status: 404, headers: { 'Retry-After': '3' } }),
    );
    const error = await caught(fetchJson(fetchFn, URL_));
    expect(error).toBeInstanceOf(SourceHttpError);
    expect(error).toMatchObject({ status: 404, bodyExcerpt: '{"message":"Not Found"}', url: URL_ });
    expect((error as SourceHttpError).headers['retry-after']).toBe('3');
    expect((error as Error).message).not.toContain('page=2');
  });

  it('keeps at most 2 KB of an error body, without splitting a character', async () => {
    const fetchFn = answering(() => new Response('é'.repeat(100_000), { status: 502 }));
    const error = (await caught(fetchJson(fetchFn, URL_))) as SourceHttpError;
    expect(Buffer.byteLength(error.bodyExcerpt)).toBeLessThanOrEqual(MAX_BODY_EXCERPT_BYTES);
    expect(Buffer.byteLength(error.bodyExcerpt)).toBeGreaterThan(MAX_BODY_EXCERPT_BYTES - 4);
    expect(error.bodyExcerpt).not.toContain('\uFFFD');
  });

  it('throws a SourceResponseError when a 2xx body is not JSON', async () => {
    const fetchFn = answering(
      () => new Response('<html>proxy</html>', { headers: { 'content-type': 'text/html' } }),
    );
    const error = await caught(fetchJson(fetchFn, URL_));
    expect(error).toBeInstanceOf(SourceResponseError);
    expect((error as Error).message).toBe(
      'response from https://api.example.com/v1/items is not JSON (text/html)',
    );
  });

  it('times out a hung request with a transient TimeoutError', async () => {
    const error = await caught(fetchJson(hanging, URL_, { timeoutMs: 20 }));
    expect((error as Error).name).toBe('TimeoutError');
    expect(classifyDefault(error, 0).errorClass).toBe('transient');
  });

  it('aborts when the caller signal aborts, before the timeout', async () => {
    const controller = new AbortController();
    const pending = caught(fetchJson(hanging, URL_, { signal: controller.signal, timeoutMs: 60_000 }));
    controller.abort();
    expect(((await pending) as Error).name).toBe('AbortError');
  });

  it('sends the given headers', async () => {
    let seen: Headers | undefined;
    const fetchFn = (async (_input: unknown, init?: RequestInit) => {
      seen = new Headers(init?.headers);
      return Response.json({});
    }) as typeof fetch;
    await fetchJson(fetchFn, URL_, { headers: { Accept: 'application/json' } });
    expect(seen?.get('accept')).toBe('application/json');
  });
});

describe('fetchJson against a real local server', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { Location: '/items' }).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Custom': 'yes' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('follows a redirect and reports the final URL', async () => {
    const response = await fetchJson(fetch, `${base}/moved`);
    expect(response).toMatchObject({ body: { ok: true }, url: `${base}/items` });
    expect(response.headers['x-custom']).toBe('yes');
  });
});

describe('sameOriginUrl', () => {
  it('accepts an absolute URL on the same origin', () => {
    expect(sameOriginUrl('https://api.example.com/v1/items?page=3', URL_)).toBe(
      'https://api.example.com/v1/items?page=3',
    );
  });

  it('resolves a relative link against the given URL', () => {
    expect(sameOriginUrl('?page=3', 'https://api.example.com', URL_)).toBe(
      'https://api.example.com/v1/items?page=3',
    );
  });

  it.each([
    ['https://evil.example.com/steal'],
    ['http://api.example.com/v1/items'],
    ['https://api.example.com:8443/x'],
  ])('refuses %s, which would send credentials to another origin', (link) => {
    expect(() => sameOriginUrl(link, URL_)).toThrow(SourceResponseError);
  });
});
