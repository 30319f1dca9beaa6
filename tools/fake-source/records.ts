import { badRequest, intParam, json, type Reply, type RouteContext, timeParam } from './http.js';
import type { FakeEntity, ListingKey } from './model.js';
import type { SourceState } from './state.js';
import { jsonReplyWithRaw, placeholder } from './traits/bodies.js';
import { movedRecord } from './traits/transfers.js';

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

/**
 * The rest-json record of an entity, broken when the source currently breaks it. A hostile field
 * (see `traits/bodies.ts`) is written as a placeholder and its JSON text added to `raw`.
 */
export function restRecord(
  state: SourceState,
  entity: FakeEntity,
  raw?: Map<string, string>,
): RestRecord | Record<string, unknown> {
  const record: RestRecord = {
    id: state.traits.publicId(entity),
    updatedAt: new Date(entity.updatedAtMs).toISOString(),
    title: entity.title,
    body: entity.body,
    version: entity.version,
  };
  if (!state.isInvalid(entity)) {
    const hostile = state.traits.hostileField(entity);
    if (hostile === null || raw === undefined) return record;
    if (hostile.kind === 'surrogate-id') return { ...record, id: `${record.id}${hostile.field}` };
    raw.set(placeholder(entity.id), hostile.json);
    return { ...record, [hostile.field]: placeholder(entity.id) };
  }
  // Two ways real APIs break records: a required field missing, or a field of the wrong type. The
  // id stays intact, as it usually does, so the failure can be retried by id once the source is fixed.
  if (state.store.variant(entity, 'corrupt', 2) === 0) {
    const { updatedAt: _dropped, ...rest } = record;
    return rest;
  }
  return { ...record, updatedAt: { value: record.updatedAt } };
}

/**
 * Most state a growing cursor carries: encoded, the cursor stays under 8,192 characters, what
 * servers accept in a URL (nginx's default) and the most a source may allow its cursors.
 */
export const MAX_CURSOR_STATE = 4_096;

/**
 * Encodes a listing position as an opaque cursor. `depth` pages into a listing and with
 * `growth` bytes a page (the `cursorGrowth` trait), the cursor carries `depth × growth` bytes of
 * state it does not need (at most {@link MAX_CURSOR_STATE}), as continuation tokens that
 * accumulate state do.
 */
export function encodeCursor(key: ListingKey, depth = 0, growth = 0): string {
  const state = growth > 0 ? { d: depth, s: 'x'.repeat(Math.min(depth * growth, MAX_CURSOR_STATE)) } : {};
  return Buffer.from(JSON.stringify({ t: key.updatedAtMs, i: key.id, ...state })).toString('base64url');
}

/** Decodes a cursor (and how many pages into its listing it is); null when it is not one of ours. */
export function decodeCursor(cursor: string): (ListingKey & { readonly depth: number }) | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { t, i, d } = parsed as { t?: unknown; i?: unknown; d?: unknown };
    const depth = typeof d === 'number' ? d : 0;
    return typeof t === 'number' && typeof i === 'string' ? { updatedAtMs: t, id: i, depth } : null;
  } catch {
    return null;
  }
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
  const sinceIndex = sinceMs === null ? 0 : ctx.state.traits.sinceIndex(sinceMs);
  return { limit: ctx.state.traits.limit(Math.min(limit, MAX_LIMIT)), sinceIndex };
}

/** `GET /records?limit&cursor&since` → `{ data, next_cursor, total }`, ordered by (updatedAt, id). */
export function listRecords(ctx: RouteContext): Reply {
  const window = listingWindow(ctx);
  if ('status' in window) return window;
  const { store } = ctx.state;
  const cursorText = ctx.query.get('cursor');
  let start = window.sinceIndex;
  let depth = 0;
  if (cursorText) {
    const after = decodeCursor(cursorText);
    if (!after) return badRequest('invalid cursor');
    if (ctx.state.traits.cursorExpired(cursorText)) return json(410, { error: 'cursor expired' });
    depth = after.depth;
    // Keyset, not offset: an entity touched meanwhile moves behind the cursor's key and is
    // listed again later, and no other entity shifts into the part already read.
    start = Math.max(start, store.indexAfter(after));
  }
  const live = store.live();
  const page = live.slice(start, start + window.limit);
  const last = page.at(-1);
  const raw = new Map<string, string>();
  const growth = ctx.state.traits.current.cursorGrowth;
  // The continuation is decided before rows the caller may not see are dropped (post-limit filtering).
  const next = last && start + page.length < live.length ? encodeCursor(last, depth + 1, growth) : null;
  if (next !== null) ctx.state.traits.issueCursor(next);
  return jsonReplyWithRaw(
    200,
    {
      data: ctx.state.traits.filter(page).map((entity) => restRecord(ctx.state, entity, raw)),
      next_cursor: next,
      total: Math.max(0, live.length - window.sinceIndex + ctx.state.traits.current.countSkew),
    },
    raw,
  );
}

/** `GET /records-paged?page&limit&since` → `{ data, page, total }`; data is empty past the end. */
export function listRecordsPaged(ctx: RouteContext): Reply {
  const window = listingWindow(ctx);
  if ('status' in window) return window;
  const page = intParam(ctx.query, 'page', 1);
  if (page === null) return badRequest('page must be a positive integer');
  const live = ctx.state.store.live();
  const start = window.sinceIndex + (page - 1) * window.limit;
  const raw = new Map<string, string>();
  const rows = ctx.state.traits.filter(live.slice(start, start + window.limit));
  return jsonReplyWithRaw(
    200,
    {
      data: rows.map((entity) => restRecord(ctx.state, entity, raw)),
      page,
      total: Math.max(0, live.length - window.sinceIndex + ctx.state.traits.current.countSkew),
    },
    raw,
  );
}

/**
 * `GET /records/{id}` → the record; 404 when unknown, deleted, chosen as not found or invisible
 * to the caller; a redirect when it moved (see `traits/transfers.ts`).
 */
export function getRecord(ctx: RouteContext): Reply {
  const id = ctx.params.id ?? '';
  const moved = movedRecord(ctx, id);
  if (moved?.kind === 'redirect')
    return json(301, { message: 'Moved Permanently' }, { location: moved.location });
  if (moved?.kind === 'serve') {
    const record = restRecord(ctx.state, moved.entity);
    return json(200, {
      ...record,
      id: moved.moved.id,
      updatedAt: new Date(moved.moved.movedAtMs).toISOString(),
    });
  }
  const entity = ctx.state.traits.resolve(id);
  if (!entity || ctx.state.isHiddenFromFetch(entity)) return json(404, { message: 'Not Found' });
  const raw = new Map<string, string>();
  return jsonReplyWithRaw(200, restRecord(ctx.state, entity, raw), raw);
}
