import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import {
  type GithubIssuesConfig,
  githubIssuesConnector as github,
  githubIssuesConfigSchema,
} from '../../lib/connectors/github-issues/index.js';
import { decodePosition, encodePosition } from '../../lib/connectors/keyset.js';
import { ItemValidationError, SourceResponseError } from '../../lib/retry/errors.js';

const API = 'https://api.github.com/repos/octo/hello';

function config(overrides: Record<string, unknown> = {}): GithubIssuesConfig {
  return githubIssuesConfigSchema.parse({ owner: 'octo', repo: 'hello', ...overrides });
}

interface Call {
  readonly url: string;
  readonly headers: Headers;
}

/** A context whose fetch answers with `respond` and records every request. */
function context(respond: (url: string) => Response, since: string | null = null) {
  const calls: Call[] = [];
  const fetchFn = (async (input: unknown, init?: RequestInit) => {
    calls.push({ url: String(input), headers: new Headers(init?.headers) });
    return respond(String(input));
  }) as typeof fetch;
  const ctx: ConnectorContext = { fetch: fetchFn, secrets: async (ref) => `token-for-${ref}`, since };
  return { ctx, calls };
}

function issue(number: number, extra: Record<string, unknown> = {}) {
  return { number, title: `Issue ${number}`, state: 'open', updated_at: '2024-05-01T10:00:00Z', ...extra };
}

const pageWithLinks = (body: unknown[], link?: string) =>
  Response.json(body, { headers: link ? { Link: link } : {} });

describe('github-issues fetchPage', () => {
  it('asks for every state, oldest update first, perPage per page', async () => {
    const { ctx, calls } = context(() => pageWithLinks([]));
    await github.fetchPage(config({ perPage: 50 }), null, ctx);
    const url = new URL(calls[0]!.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${API}/issues`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      state: 'all',
      sort: 'updated',
      direction: 'asc',
      per_page: '50',
    });
  });

  it('adds since on an incremental run', async () => {
    const { ctx, calls } = context(() => pageWithLinks([]), '2024-04-01T00:00:00.000Z');
    await github.fetchPage(config(), null, ctx);
    expect(new URL(calls[0]!.url).searchParams.get('since')).toBe('2024-04-01T00:00:00.000Z');
  });

  it('sends GitHub’s media type, API version, a User-Agent and the resolved token', async () => {
    const { ctx, calls } = context(() => pageWithLinks([]));
    await github.fetchPage(config({ tokenRef: '/gh/token' }), null, ctx);
    const { headers } = calls[0]!;
    expect(headers.get('accept')).toBe('application/vnd.github+json');
    expect(headers.get('x-github-api-version')).toBe('2022-11-28');
    expect(headers.get('user-agent')).toMatch(/harvester/);
    expect(headers.get('authorization')).toBe('Bearer token-for-/gh/token');
  });

  it('sends no Authorization header without a tokenRef', async () => {
    const { ctx, calls } = context(() => pageWithLinks([]));
    await github.fetchPage(config(), null, ctx);
    expect(calls[0]!.headers.has('authorization')).toBe(false);
  });

  it('returns a keyset position as the cursor and estimates what remains from rel="last" × the page size served', async () => {
    const link = `<${API}/issues?per_page=100&page=2>; rel="next", <${API}/issues?per_page=100&page=7>; rel="last"`;
    const body = [issue(1, { updated_at: '2024-05-01T09:00:00Z' }), issue(2)];
    const { ctx } = context(() => pageWithLinks(body, link));
    const page = await github.fetchPage(config(), null, ctx);
    // The server served 2 of the 100 asked: a silent cap, so 6 pages of 2 are left, not 6 of 100.
    expect(page.remaining).toBe(14);
    expect(decodePosition(page.nextCursor, null)).toMatchObject({
      at: '2024-05-01T10:00:00.000Z',
      ids: ['2'],
    });
    expect(page.items).toHaveLength(2);
  });

  it('asks the next page since the last delivered issue, skipping the issues delivered at that instant', async () => {
    const cursor = encodePosition({ at: '2024-05-01T10:00:00.000Z', ids: ['2'] });
    const later = issue(3, { updated_at: '2024-05-01T11:00:00Z' });
    const { ctx, calls } = context(() => pageWithLinks([issue(2), issue(5), later]));
    const page = await github.fetchPage(config(), cursor, ctx);
    const url = new URL(calls[0]!.url);
    expect(url.searchParams.get('since')).toBe('2024-05-01T10:00:00.000Z');
    expect(url.searchParams.has('page')).toBe(false);
    // #5 shares #2's instant but was not delivered yet: a tie, kept.
    expect(page.items).toEqual([issue(5), later]);
  });

  it('ends the stream on a page without rel="next" and counts what remains exactly', async () => {
    const cursor = encodePosition({ at: '2024-05-01T10:00:00.000Z', ids: ['201'] });
    const { ctx } = context(() =>
      pageWithLinks([issue(201), issue(202)], `<${API}/issues?page=2>; rel="prev"`),
    );
    const page = await github.fetchPage(config(), cursor, ctx);
    expect(page).toMatchObject({ nextCursor: null, remaining: 1 });
    expect(page.items).toEqual([issue(202)]);
  });

  it('follows the next link inside a tie group larger than a page, the watermark not capped until the group is checked', async () => {
    const link = `<${API}/issues?since=2024-05-01T10%3A00%3A00.000Z&page=2>; rel="next"`;
    const { ctx, calls } = context(() => pageWithLinks([issue(1), issue(2)], link));
    const first = await github.fetchPage(
      config(),
      encodePosition({ at: '2024-05-01T10:00:00.000Z', ids: [] }),
      ctx,
    );
    expect(first.items).toHaveLength(2);
    const position = decodePosition(first.nextCursor, null);
    expect(position).toMatchObject({ follow: `${API}/issues?since=2024-05-01T10%3A00%3A00.000Z&page=2` });
    expect(first.watermarkCeiling).toBeNull();

    await github.fetchPage(config(), first.nextCursor, ctx);
    expect(calls[1]!.url).toBe(position.follow);
  });

  it('sends no since at all on a first page without a watermark (some APIs answer the epoch with nothing)', async () => {
    const { ctx, calls } = context(() => pageWithLinks([]));
    await github.fetchPage(config(), null, ctx);
    expect(new URL(calls[0]!.url).searchParams.has('since')).toBe(false);
  });

  it('refuses a tie continuation on another origin, which would receive the token', async () => {
    const cursor = encodePosition({
      at: '2024-05-01T10:00:00.000Z',
      ids: [],
      follow: 'https://evil.test/steal',
    });
    const { ctx, calls } = context(() => pageWithLinks([]));
    await expect(github.fetchPage(config({ tokenRef: 't' }), cursor, ctx)).rejects.toThrow(
      SourceResponseError,
    );
    expect(calls).toEqual([]);
  });

  it('refuses a next link on another origin', async () => {
    const { ctx } = context(() => pageWithLinks([issue(1)], '<https://evil.test/?page=2>; rel="next"'));
    await expect(github.fetchPage(config(), null, ctx)).rejects.toThrow(SourceResponseError);
  });

  it('rejects a body that is not an array of issues', async () => {
    const { ctx } = context(() => Response.json({ message: 'odd' }));
    await expect(github.fetchPage(config(), null, ctx)).rejects.toThrow(SourceResponseError);
  });

  it('keeps pull requests by default', async () => {
    const { ctx } = context(() => pageWithLinks([issue(1), issue(2, { pull_request: { url: 'x' } })]));
    expect((await github.fetchPage(config(), null, ctx)).items).toHaveLength(2);
  });

  it('filters pull requests out of the page when they are excluded, and reports no estimate', async () => {
    const link = `<${API}/issues?page=2>; rel="next", <${API}/issues?page=3>; rel="last"`;
    const { ctx } = context(() => pageWithLinks([issue(1), issue(2, { pull_request: { url: 'x' } })], link));
    const page = await github.fetchPage(config({ includePullRequests: false }), null, ctx);
    expect(page.items).toEqual([issue(1)]);
    expect(page.remaining).toBeNull();
  });

  it('uses a GitHub Enterprise Server base URL', async () => {
    const { ctx, calls } = context(() => pageWithLinks([]));
    await github.fetchPage(config({ baseUrl: 'https://ghe.example.com/api/v3/' }), null, ctx);
    expect(calls[0]!.url).toMatch(/^https:\/\/ghe\.example\.com\/api\/v3\/repos\/octo\/hello\/issues\?/);
  });
});

describe('github-issues fetchItem', () => {
  it('fetches one issue by number', async () => {
    const { ctx, calls } = context(() => Response.json(issue(42)));
    expect(await github.fetchItem(config(), '42', ctx)).toEqual(issue(42));
    expect(calls[0]!.url).toBe(`${API}/issues/42`);
  });

  it('rejects an id that is not an issue number without a request', async () => {
    const { ctx, calls } = context(() => Response.json({}));
    await expect(github.fetchItem(config(), '../pulls', ctx)).rejects.toThrow(ItemValidationError);
    expect(calls).toEqual([]);
  });
});

describe('github-issues normalize', () => {
  it('makes the number the id and updated_at, as ISO UTC with milliseconds, the version', () => {
    const raw = issue(7, {
      updated_at: '2024-05-01T10:00:00Z',
      user: { login: 'mona', id: 1 },
      labels: [{ name: 'bug' }, 'ui'],
      pull_request: { url: 'https://api.github.com/repos/octo/hello/pulls/7' },
      body: 'text',
    });
    const result = github.normalize(config(), raw);
    expect(result).toMatchObject({
      ok: true,
      entity: {
        id: '7',
        version: '2024-05-01T10:00:00.000Z',
        data: {
          number: 7,
          title: 'Issue 7',
          user: 'mona',
          labels: ['bug', 'ui'],
          is_pull_request: true,
          body: 'text',
        },
      },
    });
  });

  it('marks a plain issue as not a pull request', () => {
    const result = github.normalize(config(), issue(8));
    expect(result.ok && result.entity.data.is_pull_request).toBe(false);
  });

  it.each([
    [{ title: 'x', updated_at: '2024-05-01T10:00:00Z' }, 'field `number` is missing', null],
    [
      { number: 'seven', updated_at: '2024-05-01T10:00:00Z' },
      'field `number` is not a positive integer',
      null,
    ],
    [{ number: 7 }, 'field `updated_at` is missing', '7'],
    [{ number: 7, updated_at: 'yesterday' }, 'field `updated_at` is not a valid timestamp', '7'],
    ['not an issue', 'record is not an object', null],
  ])('rejects %j: %s', (raw, reason, ref) => {
    expect(github.normalize(config(), raw)).toEqual({ ok: false, reason, ref });
  });
});

describe('github-issues config', () => {
  it('applies the documented defaults', () => {
    expect(config()).toEqual({
      owner: 'octo',
      repo: 'hello',
      baseUrl: 'https://api.github.com',
      perPage: 100,
      includePullRequests: true,
    });
  });

  it.each([
    [{ perPage: 101 }, 'perPage'],
    [{ perPage: 0 }, 'perPage'],
    [{ owner: 'no spaces' }, 'owner'],
    [{ repo: '..' }, 'repo'],
    [{ baseUrl: 'ftp://x' }, 'baseUrl'],
    [{ tokenRef: '' }, 'tokenRef'],
    [{ token: 'ghp_x' }, 'token'],
  ])('rejects %j at the field %s', (overrides, path) => {
    const result = githubIssuesConfigSchema.safeParse({ owner: 'octo', repo: 'hello', ...overrides });
    expect(result.success).toBe(false);
    expect(
      result.error?.issues.map((issue) => issue.path.concat('keys' in issue ? issue.keys : []).join('.')),
    ).toEqual([path]);
  });

  it('declares a stream ordered by modification time whose next cursor needs the response', () => {
    expect(github.manifestFor(config())).toMatchObject({
      name: 'github-issues',
      orderedByModifiedTime: true,
      cursorComputableWithoutResponse: false,
    });
  });
});
