import { badRequest, intParam, json, type Reply, type RouteContext, timeParam } from './http.js';
import type { FakeEntity, ListingKey } from './model.js';
import type { SourceState } from './state.js';
import { oddField } from './traits.js';

/**
 * The rest-json shapes: a keyset-cursor listing, a page-number listing and an item fetch, as a
 * generic JSON API offers them. The cursor listing is the safe one (modifications during a run
 * never make items skip); the page-number listing shifts like every offset API does.
 */

/** Largest `limit` accepted; bigger values are clamped, as most APIs do. */
export const MAX_LIMIT = 1_000;

/** A record as the rest-json routes serve it. */
export interface RestRecord {
  readonly id: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly updatedAt: string;
  readonly title: string;
  readonly body: string;
  readonly version: number;
}

/** The rest-json record of an entity, broken when the source currently breaks it. */
export function restRecord(state: SourceState, entity: FakeEntity): RestRecord | Record<string, unknown> {
  const record: RestRecord = {
    id: entity.id,
    updatedAt: new Date(entity.updatedAtMs).toISOString(),
    title: entity.title,
    body: entity.body,
    version: entity.version,
  };
  const odd = state.traits.oddValues[entity.id];
  if (odd !== undefined) return { ...record, ...oddField(odd, entity.number) };
  if (!state.isInvalid(entity)) return record;
  // Two ways real APIs break records: a required field missing, or a field of the wrong type. The
  // id stays intact, as it usually does, so the failure can be retried by id once the source is fixed.
  if (state.store.variant(entity, 'corrupt', 2) === 0) {
    const { updatedAt: _dropped, ...rest } = record;
    return rest;
  }
  return { ...record, updatedAt: { value: record.updatedAt } };
}

/** Encodes a listing position as an opaque cursor. */
export function encodeCursor(key: ListingKey): string {
  return Buffer.from(JSON.stringify({ t: key.updatedAtMs, i: key.id })).toString('base64url');
}

/** Decodes a cursor (growth padding after a `.` ignored); null when it is not one of ours. */
export function decodeCursor(cursor: string): ListingKey | null {
  try {
    const [key = ''] = cursor.split('.');
    const parsed: unknown = JSON.parse(Buffer.from(key, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { t, i } = parsed as { t?: unknown; i?: unknown };
    return typeof t === 'number' && typeof i === 'string' ? { updatedAtMs: t, id: i } : null;
  } catch {
    return null;
  }
}

/** The `cursorGrowth` trait: the next cursor carries the previous one's padding and more. */
function grown(cursor: string, previous: string | null, state: SourceState): string {
  const growth = state.traits.cursorGrowth;
  if (growth === 0) return cursor;
  const carried = previous?.split('.')[1]?.length ?? 0;
  return `${cursor}.${'x'.repeat(carried + growth)}`;
}

interface Window {
  readonly limit: number;
  /** Index of the first live entity matching `since`. */
  readonly sinceIndex: number;
}

function listingWindow(ctx: RouteContext): Window | Reply {
  const limit = intParam(ctx.query, 'limit', ctx.pageSize);
  if (limit === null) return badRequest('limit must be a positive integer');
  const sinceMs = timeParam(ctx.query, 'since');
  if (Number.isNaN(sinceMs)) return badRequest('since must be an ISO 8601 time');
  const sinceIndex = sinceMs === null ? 0 : ctx.state.store.indexSince(sinceMs);
  const ignored = ctx.state.traits.ignoreLimit;
  return { limit: ignored ?? Math.min(limit, MAX_LIMIT), sinceIndex };
}

/** `GET /records?limit&cursor&since` → `{ data, next_cursor, total }`, ordered by (updatedAt, id). */
export function listRecords(ctx: RouteContext): Reply {
  const window = listingWindow(ctx);
  if ('status' in window) return window;
  const { store } = ctx.state;
  const cursorText = ctx.query.get('cursor');
  let start = window.sinceIndex;
  if (cursorText) {
    const after = decodeCursor(cursorText);
    if (!after) return badRequest('invalid cursor');
    // Keyset, not offset: an entity touched meanwhile moves behind the cursor's key and is
    // listed again later, and no other entity shifts into the part already read.
    start = Math.max(start, store.indexAfter(after));
  }
  const live = store.live();
  const page = live.slice(start, start + window.limit);
  const last = page.at(-1);
  return json(200, {
    data: page.map((entity) => restRecord(ctx.state, entity)),
    next_cursor:
      last && start + page.length < live.length ? grown(encodeCursor(last), cursorText, ctx.state) : null,
    total: live.length - window.sinceIndex,
  });
}

/** `GET /records-paged?page&limit&since` → `{ data, page, total }`; data is empty past the end. */
export function listRecordsPaged(ctx: RouteContext): Reply {
  const window = listingWindow(ctx);
  if ('status' in window) return window;
  const page = intParam(ctx.query, 'page', 1);
  if (page === null) return badRequest('page must be a positive integer');
  const live = ctx.state.store.live();
  const start = window.sinceIndex + (page - 1) * window.limit;
  return json(200, {
    data: live.slice(start, start + window.limit).map((entity) => restRecord(ctx.state, entity)),
    page,
    total: live.length - window.sinceIndex,
  });
}

/** `GET /records/{id}` → the record; 404 when unknown, deleted, or chosen as not found. */
export function getRecord(ctx: RouteContext): Reply {
  const entity = ctx.state.store.find(ctx.params.id ?? '');
  if (!entity || ctx.state.isHiddenFromFetch(entity)) return json(404, { message: 'Not Found' });
  return json(200, restRecord(ctx.state, entity));
}
