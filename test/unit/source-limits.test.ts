import { describe, expect, it } from 'vitest';
import { githubIssuesConnector } from '../../lib/connectors/github-issues/index.js';
import { fetchJson } from '../../lib/connectors/http.js';
import { resolveLimits, SOURCE_LIMITS, SourceLimitError } from '../../lib/connectors/limits.js';
import { restJsonConnector } from '../../lib/connectors/rest-json/index.js';
import { classifyDefault } from '../../lib/retry/classify.js';

const URL_ = 'https://api.example.com/v1/items';

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A 2xx answer whose body is `chunks` of `chunkBytes` bytes, counting how many were pulled. */
function streamed(chunks: number, chunkBytes: number, headers: Record<string, string> = {}) {
  const pulled = { count: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.count === chunks) return controller.close();
      pulled.count += 1;
      controller.enqueue(new Uint8Array(chunkBytes).fill(0x20));
    },
  });
  const fetchFn = (async () => new Response(body, { headers })) as unknown as typeof fetch;
  return { fetchFn, pulled };
}

describe('the body limit', () => {
  it('refuses a Content-Length over the limit before reading the body', async () => {
    const { fetchFn, pulled } = streamed(100, 1_024, { 'content-length': String(100 * 1_024) });

    const error = await caught(fetchJson(fetchFn, URL_, { maxBodyBytes: 10_000 }));

    expect(error).toBeInstanceOf(SourceLimitError);
    expect((error as Error).message).toMatch(
      /announces 102400 bytes \(Content-Length\).*limit of 10000 bytes/,
    );
    // The stream itself may prefetch one chunk; the client reads none of the 100.
    expect(pulled.count).toBeLessThanOrEqual(1);
    expect(classifyDefault(error, 0).errorClass).toBe('permanent');
  });

  it('stops reading a body without a length once it passes the limit', async () => {
    const { fetchFn, pulled } = streamed(1_000, 1_024);

    const error = await caught(fetchJson(fetchFn, URL_, { maxBodyBytes: 10_000 }));

    expect((error as Error).message).toMatch(/larger than 10000 bytes once decompressed/);
    expect(pulled.count).toBeLessThan(15);
  });

  it('reads a body within the limit', async () => {
    const fetchFn = (async () => Response.json({ a: 1 })) as unknown as typeof fetch;

    expect((await fetchJson(fetchFn, URL_, { maxBodyBytes: 1_024 })).body).toEqual({ a: 1 });
  });
});

describe('limits in a source config', () => {
  it.each([
    ['maxBodyBytes', SOURCE_LIMITS.bodyBytes.ceiling + 1],
    ['maxRecordsPerPage', SOURCE_LIMITS.recordsPerPage.ceiling + 1],
    ['maxCursorLength', SOURCE_LIMITS.cursorChars.ceiling + 1],
    ['maxNextUrlLength', SOURCE_LIMITS.nextUrlChars.ceiling + 1],
  ])('refuses %s above its ceiling', (field, value) => {
    const config = {
      url: URL_,
      idField: 'id',
      updatedAtField: 'u',
      pagination: { type: 'next-url', nextUrlPath: 'next' },
    };

    expect(restJsonConnector.configSchema.safeParse({ ...config, limits: { [field]: value } }).success).toBe(
      false,
    );
    expect(
      restJsonConnector.configSchema.safeParse({ ...config, limits: { [field]: value - 1 } }).success,
    ).toBe(true);
  });

  it('defaults records a page to four times the page size, never past the ceiling', () => {
    expect(resolveLimits(undefined, 100).recordsPerPage).toBe(400);
    expect(resolveLimits(undefined, 5_000).recordsPerPage).toBe(SOURCE_LIMITS.recordsPerPage.ceiling);
    expect(resolveLimits({ maxRecordsPerPage: 7 }, 100).recordsPerPage).toBe(7);
  });
});

describe('a next-page URL over the limit', () => {
  it('fails a rest-json page as a permanent limit error naming the setting', async () => {
    const config = restJsonConnector.configSchema.parse({
      url: URL_,
      idField: 'id',
      updatedAtField: 'u',
      pagination: { type: 'next-url', nextUrlPath: 'next' },
      limits: { maxNextUrlLength: 100 },
    });
    const next = `${URL_}?after=${'x'.repeat(200)}`;
    const fetchFn = (async () => Response.json({ 0: 0, next, items: [] })) as unknown as typeof fetch;
    const ctx = { fetch: fetchFn, secrets: async () => '', since: null };

    const error = await caught(restJsonConnector.fetchPage({ ...config, itemsPath: 'items' }, null, ctx));

    expect(error).toBeInstanceOf(SourceLimitError);
    expect((error as Error).message).toMatch(
      /next-page URL .* is 2\d\d characters, more than this source's limit of 100.*limits\.maxNextUrlLength/,
    );
  });

  it("fails a GitHub page whose Link header's next URL is over the limit", async () => {
    const config = githubIssuesConnector.configSchema.parse({
      owner: 'o',
      repo: 'r',
      limits: { maxNextUrlLength: 100 },
    });
    const link = `<https://api.github.com/repositories/1/issues?page=2&x=${'y'.repeat(200)}>; rel="next"`;
    const fetchFn = (async () => Response.json([], { headers: { Link: link } })) as unknown as typeof fetch;

    const error = await caught(
      githubIssuesConnector.fetchPage(config, null, { fetch: fetchFn, secrets: async () => '', since: null }),
    );

    expect(error).toBeInstanceOf(SourceLimitError);
  });
});
