import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import {
  type RestJsonConfig,
  restJsonConnector as rest,
  restJsonConfigSchema,
} from '../../lib/connectors/rest-json/index.js';
import { classifyDefault } from '../../lib/retry/classify.js';
import { ClassifiedError, SourceResponseError } from '../../lib/retry/errors.js';

const LIST = 'https://api.example.com/v1/records';

function config(overrides: Record<string, unknown> = {}): RestJsonConfig {
  return restJsonConfigSchema.parse({
    url: LIST,
    idField: 'id',
    updatedAtField: 'updatedAt',
    pagination: { type: 'page' },
    ...overrides,
  });
}

/** A context whose fetch answers `body` as JSON and records every requested URL. */
function context(body: unknown, since: string | null = null) {
  const urls: URL[] = [];
  const headers: Headers[] = [];
  const fetchFn = (async (input: unknown, init?: RequestInit) => {
    urls.push(new URL(String(input)));
    headers.push(new Headers(init?.headers));
    return Response.json(body);
  }) as typeof fetch;
  const ctx: ConnectorContext = { fetch: fetchFn, secrets: async () => 'k3y', since };
  return { ctx, urls, headers };
}

const record = (id: number) => ({ id, updatedAt: '2024-05-01T10:00:00Z' });

describe('rest-json page pagination', () => {
  const pages = {
    pagination: { type: 'page', pageParam: 'p', firstPage: 0 },
    pageSize: 2,
    pageSizeParam: 'size',
  };

  it('requests the first page, the page size and the extra query', async () => {
    const { ctx, urls } = context([record(1)]);
    await rest.fetchPage(config({ ...pages, extraQuery: { format: 'json' } }), null, ctx);
    expect(Object.fromEntries(urls[0]!.searchParams)).toEqual({ p: '0', size: '2', format: 'json' });
  });

  it('continues with the next page number while pages have records', async () => {
    const { ctx, urls } = context([record(1), record(2)]);
    const page = await rest.fetchPage(config(pages), '4', ctx);
    expect(urls[0]!.searchParams.get('p')).toBe('4');
    expect(page.nextCursor).toBe('5');
  });

  it('ends the stream on an empty page', async () => {
    const { ctx } = context([]);
    expect((await rest.fetchPage(config(pages), '5', ctx)).nextCursor).toBeNull();
  });

  it('computes the next cursor without a response, so a failed page can be skipped', () => {
    expect(rest.nextCursorWithoutResponse?.(config(pages), null)).toBe('1');
    expect(rest.nextCursorWithoutResponse?.(config(pages), '7')).toBe('8');
    expect(rest.manifestFor(config(pages)).cursorComputableWithoutResponse).toBe(true);
  });

  it('refuses a page cursor that is not a number as a permanent error', async () => {
    const { ctx } = context([]);
    const error = await rest.fetchPage(config(pages), 'abc', ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClassifiedError);
    expect(classifyDefault(error, 0).errorClass).toBe('permanent');
  });
});

describe('rest-json cursor pagination', () => {
  const cursors = {
    itemsPath: 'data.items',
    pagination: { type: 'cursor', cursorParam: 'after', nextCursorPath: 'meta.next' },
  };

  it('sends no cursor on the first page and returns the token from the response', async () => {
    const { ctx, urls } = context({ data: { items: [record(1)] }, meta: { next: 'tok-2' } });
    const page = await rest.fetchPage(config(cursors), null, ctx);
    expect(urls[0]!.searchParams.has('after')).toBe(false);
    expect(page).toMatchObject({ items: [record(1)], nextCursor: 'tok-2' });
  });

  it('sends the cursor back as its parameter', async () => {
    const { ctx, urls } = context({ data: { items: [] }, meta: { next: null } });
    const page = await rest.fetchPage(config(cursors), 'tok-2', ctx);
    expect(urls[0]!.searchParams.get('after')).toBe('tok-2');
    expect(page.nextCursor).toBeNull();
  });

  it('fails loudly when the source hands back the cursor it was given', async () => {
    const { ctx } = context({ data: { items: [record(1)] }, meta: { next: 'tok-2' } });
    await expect(rest.fetchPage(config(cursors), 'tok-2', ctx)).rejects.toThrow(/would loop/);
  });

  it('reads the total from totalPath', async () => {
    const { ctx } = context({ data: { items: [] }, meta: { total: 1234 } });
    expect((await rest.fetchPage(config({ ...cursors, totalPath: 'meta.total' }), null, ctx)).total).toBe(
      1234,
    );
  });

  it('rejects a response whose itemsPath is not an array', async () => {
    const { ctx } = context({ data: { items: 'nope' } });
    await expect(rest.fetchPage(config(cursors), null, ctx)).rejects.toThrow(SourceResponseError);
  });
});

describe('rest-json next-url pagination', () => {
  const nextUrl = { itemsPath: 'results', pagination: { type: 'next-url', nextUrlPath: 'links.next' } };

  it('returns the next URL, resolved against the request, as the cursor', async () => {
    const { ctx } = context({ results: [record(1)], links: { next: '/v1/records?page=2&size=100' } });
    const page = await rest.fetchPage(config(nextUrl), null, ctx);
    expect(page.nextCursor).toBe('https://api.example.com/v1/records?page=2&size=100');
  });

  it('follows a next-url cursor as given', async () => {
    const cursor = 'https://api.example.com/v1/records?page=2&size=100';
    const { ctx, urls } = context({ results: [], links: {} });
    const page = await rest.fetchPage(config(nextUrl), cursor, ctx);
    expect(urls[0]!.href).toBe(cursor);
    expect(page.nextCursor).toBeNull();
  });

  it('refuses a next URL on another origin', async () => {
    const { ctx } = context({ results: [record(1)], links: { next: 'https://evil.test/page2' } });
    await expect(rest.fetchPage(config(nextUrl), null, ctx)).rejects.toThrow(SourceResponseError);
  });

  it('cannot compute the next cursor without a response', () => {
    expect(rest.manifestFor(config(nextUrl)).cursorComputableWithoutResponse).toBe(false);
    expect(() => rest.nextCursorWithoutResponse?.(config(nextUrl), null)).toThrow(ClassifiedError);
  });
});

describe('rest-json requests', () => {
  it('adds the since parameter on incremental runs', async () => {
    const { ctx, urls } = context([], '2024-04-01T00:00:00.000Z');
    await rest.fetchPage(config({ sinceParam: 'modified_after' }), null, ctx);
    expect(urls[0]!.searchParams.get('modified_after')).toBe('2024-04-01T00:00:00.000Z');
  });

  it('sends the secret with the configured header and prefix', async () => {
    const { ctx, headers } = context([]);
    await rest.fetchPage(config({ auth: { header: 'X-Api-Key', prefix: '', secretRef: 'ref' } }), null, ctx);
    expect(headers[0]!.get('x-api-key')).toBe('k3y');
  });

  it('fetches one record through itemUrl and itemPath', async () => {
    const { ctx, urls } = context({ record: record(9) });
    const item = await rest.fetchItem(config({ itemUrl: `${LIST}/{id}`, itemPath: 'record' }), 'a b', ctx);
    expect(item).toEqual(record(9));
    expect(urls[0]!.pathname).toBe('/v1/records/a%20b');
  });

  it('explains, as a permanent error, that retry by id needs an itemUrl', async () => {
    const { ctx } = context({});
    const error = await rest.fetchItem(config(), '9', ctx).catch((e: unknown) => e);
    expect(classifyDefault(error, 0)).toEqual({
      errorClass: 'permanent',
      reason: 'retry by id is unavailable: this rest-json source has no `itemUrl` configured',
    });
  });

  it('declares the stream keyed only when ordered and read by key (sinceParam) or through a stable cursor', () => {
    const stableCursor = { type: 'cursor', cursorParam: 'c', nextCursorPath: 'next', stable: true };
    expect(rest.manifestFor(config()).orderedByModifiedTime).toBe(false);
    // Ordered, but paged by position without a since filter: an edit mid-run shifts pages.
    expect(rest.manifestFor(config({ ordered: true })).orderedByModifiedTime).toBe(false);
    expect(rest.manifestFor(config({ ordered: true, sinceParam: 'since' })).orderedByModifiedTime).toBe(true);
    expect(rest.manifestFor(config({ ordered: true, pagination: stableCursor })).orderedByModifiedTime).toBe(
      true,
    );
    expect(rest.manifestFor(config({ sinceParam: 'since' })).orderedByModifiedTime).toBe(false);
  });
});

describe('rest-json normalize', () => {
  const nested = config({ idField: 'meta.key', updatedAtField: 'meta.changed' });

  it.each([
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00', '2024-05-01T10:00:00.000Z'],
    [1714557600, '2024-05-01T10:00:00.000Z'],
    [1714557600123, '2024-05-01T10:00:00.123Z'],
  ])('reads the modification time %j as %s', (changed, version) => {
    const raw = { meta: { key: 'k1', changed } };
    expect(rest.normalize(nested, raw)).toEqual({ ok: true, entity: { id: 'k1', version, data: raw } });
  });

  it('turns a numeric id into a string', () => {
    expect(rest.normalize(config(), record(42))).toMatchObject({ ok: true, entity: { id: '42' } });
  });

  it.each([
    [{ updatedAt: '2024-05-01T10:00:00Z' }, 'field `id` is missing', null],
    [{ id: { x: 1 }, updatedAt: '2024-05-01T10:00:00Z' }, 'field `id` is not a string or number', null],
    [{ id: '', updatedAt: '2024-05-01T10:00:00Z' }, 'field `id` is not a string or number', null],
    [{ id: 3 }, 'field `updatedAt` is missing', '3'],
    [{ id: 3, updatedAt: 'last tuesday' }, 'field `updatedAt` is not an ISO 8601 time or epoch number', '3'],
    [[1, 2], 'record is not an object', null],
    [null, 'record is not an object', null],
  ])('rejects %j: %s', (raw, reason, ref) => {
    expect(rest.normalize(config(), raw)).toEqual({ ok: false, reason, ref });
  });
});
