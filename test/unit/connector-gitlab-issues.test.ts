import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import {
  type GitlabIssuesConfig,
  gitlabIssuesConnector as gitlab,
  gitlabIssuesConfigSchema,
} from '../../lib/connectors/gitlab-issues/index.js';
import { decodePosition, encodePosition } from '../../lib/connectors/keyset.js';
import { InvalidConnectorConfigError, parseConnectorConfig } from '../../lib/connectors/registry.js';
import { SourceHttpError } from '../../lib/retry/errors.js';

const API = 'https://gitlab.example.com/api/v4';
const NOW = Date.parse('2024-05-01T12:00:00Z');

function config(overrides: Record<string, unknown> = {}): GitlabIssuesConfig {
  return gitlabIssuesConfigSchema.parse({ project: 'group/sub/project', baseUrl: API, ...overrides });
}

/** A context whose fetch answers with `respond` and records every request. */
function context(respond: (url: string) => Response, since: string | null = null) {
  const calls: { url: string; headers: Headers }[] = [];
  const fetchFn = (async (input: unknown, init?: RequestInit) => {
    calls.push({ url: String(input), headers: new Headers(init?.headers) });
    return respond(String(input));
  }) as typeof fetch;
  const ctx: ConnectorContext = { fetch: fetchFn, secrets: async (ref) => `glpat-for-${ref}`, since };
  return { ctx, calls };
}

const issue = (iid: number, updatedAt = '2024-05-01T10:00:00.123Z') => ({
  iid,
  title: `#${iid}`,
  updated_at: updatedAt,
});

function page(body: unknown[], headers: Record<string, string> = {}) {
  return Response.json(body, { headers });
}

describe('gitlab-issues config', () => {
  it('applies gitlab.com and PRIVATE-TOKEN by default', () => {
    expect(parseConnectorConfig('gitlab-issues', { project: 42 })).toEqual({
      project: '42',
      baseUrl: 'https://gitlab.com/api/v4',
      authHeader: 'private-token',
      perPage: 100,
    });
  });

  it.each([
    { project: 'just-a-name' },
    { project: '../x' },
    { project: 'a/b', perPage: 101 },
    { project: 'a/b', authHeader: 'basic' },
  ])('refuses %j', (bad) => {
    expect(() => parseConnectorConfig('gitlab-issues', bad)).toThrow(InvalidConnectorConfigError);
  });
});

describe('gitlab-issues fetchPage', () => {
  it('asks for every issue of the URL-encoded project, oldest update first, from updated_after', async () => {
    const { ctx, calls } = context(() => page([]), '2024-04-01T00:00:00.000Z');
    await gitlab.fetchPage(config({ perPage: 50 }), null, ctx);
    const url = new URL(calls[0]!.url);
    expect(url.pathname).toBe('/api/v4/projects/group%2Fsub%2Fproject/issues');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      scope: 'all',
      state: 'all',
      order_by: 'updated_at',
      sort: 'asc',
      per_page: '50',
      updated_after: '2024-04-01T00:00:00.000Z',
    });
  });

  it.each([
    ['private-token', 'private-token', 'glpat-for-ssm:/harvester/s/token'],
    ['bearer', 'authorization', 'Bearer glpat-for-ssm:/harvester/s/token'],
  ] as const)('sends the token as %s', async (authHeader, header, value) => {
    const { ctx, calls } = context(() => page([]));
    await gitlab.fetchPage(config({ authHeader, tokenRef: 'ssm:/harvester/s/token' }), null, ctx);
    expect(calls[0]!.headers.get(header)).toBe(value);
    expect(calls[0]!.headers.get(header === 'authorization' ? 'private-token' : 'authorization')).toBeNull();
  });

  it('continues from the last updated_at (keyset), not from the next offset page', async () => {
    const { ctx } = context(() =>
      page([issue(1, '2024-05-01T10:00:00.000Z'), issue(2, '2024-05-01T10:00:01.000Z')], {
        'x-page': '1',
        'x-per-page': '2',
        'x-next-page': '2',
        'x-total': '7',
        'x-total-pages': '4',
      }),
    );
    const result = await gitlab.fetchPage(config({ perPage: 2 }), null, ctx);
    const position = decodePosition(result.nextCursor, null);
    expect(position).toMatchObject({ at: '2024-05-01T10:00:01.000Z', ids: ['2'] });
    expect(position.follow).toBeUndefined();
    expect(result.remaining).toBe(7);
  });

  it('ends when X-Next-Page is empty, and estimates nothing when GitLab omits X-Total', async () => {
    const { ctx } = context(() => page([issue(5)], { 'x-page': '3', 'x-per-page': '2', 'x-next-page': '' }));
    const result = await gitlab.fetchPage(config({ perPage: 2 }), null, ctx);
    expect(result.nextCursor).toBeNull();
    expect(result.remaining).toBeNull();
  });

  it('follows GitLab’s own next page inside a tie group larger than a page', async () => {
    const { ctx } = context(
      () => page([issue(1), issue(2)], { 'x-page': '1', 'x-per-page': '2', 'x-next-page': '2' }),
      '2024-05-01T10:00:00.123Z',
    );
    const result = await gitlab.fetchPage(config({ perPage: 2 }), null, ctx);
    const follow = new URL(decodePosition(result.nextCursor, null).follow!);
    expect(follow.searchParams.get('page')).toBe('2');
    expect(follow.origin).toBe('https://gitlab.example.com');
    // Not capped while the group is read: it is checked once the listing moves past it.
    expect(result.watermarkCeiling).toBeNull();
  });

  it('asks updated_after in whole seconds, skipping what that lists before the key', async () => {
    const before = { ...issue(1), updated_at: '2024-05-01T10:00:00.050Z' };
    const after = { ...issue(2), updated_at: '2024-05-01T10:00:00.500Z' };
    const { ctx, calls } = context(() => page([before, after], { 'x-page': '1', 'x-per-page': '2' }));
    const cursor = encodePosition({ at: '2024-05-01T10:00:00.123Z', ids: [] });
    const result = await gitlab.fetchPage(config({ perPage: 2 }), cursor, ctx);
    expect(new URL(calls[0]!.url).searchParams.get('updated_after')).toBe('2024-05-01T10:00:00.000Z');
    expect(result.items).toEqual([after]);
  });
});

describe('gitlab-issues classification', () => {
  const error = (status: number, headers: Record<string, string> = {}) =>
    new SourceHttpError(status, headers, 'Retry later', `${API}/projects/1/issues`);
  const reset = String(NOW / 1_000 + 30);

  it.each([
    ['429 with Retry-After', error(429, { 'retry-after': '12' }), 'transient', 12_000],
    [
      '429 with RateLimit-Remaining 0 and RateLimit-Reset',
      error(429, { 'ratelimit-remaining': '0', 'ratelimit-reset': reset }),
      'transient',
      30_000,
    ],
    ['429 without headers', error(429), 'transient', 60_000],
    ['403 with Retry-After', error(403, { 'retry-after': '5' }), 'transient', 5_000],
    [
      '403 with RateLimit-Remaining 0',
      error(403, { 'ratelimit-remaining': '0', 'ratelimit-reset': reset }),
      'transient',
      30_000,
    ],
    [
      '403 with quota left (a real denial)',
      error(403, { 'ratelimit-remaining': '1999', 'ratelimit-reset': reset }),
      'permanent',
      undefined,
    ],
    ['403 without headers', error(403), 'permanent', undefined],
    ['401', error(401), 'permanent', undefined],
    ['404', error(404), 'permanent', undefined],
    ['503', error(503), 'transient', undefined],
  ] as const)('%s is %s', (_name, failure, errorClass, waitMs) => {
    const verdict = gitlab.classify(failure, NOW);
    expect(verdict.errorClass).toBe(errorClass);
    expect(verdict.waitMs).toBe(waitMs);
  });
});
