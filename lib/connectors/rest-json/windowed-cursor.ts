import { ClassifiedError } from '../../retry/errors.js';
import type { FetchedPage, TimeWindow } from '../contract.js';
import type { RestJsonConfig } from './config.js';
import { normalizeRecord } from './normalize.js';
import { nextCursor, pageUrl } from './pagination.js';

/**
 * One window of a stream over a stable source cursor (`pagination.stable`, with `sinceParam`):
 * the source's token is itself a keyset position, so a partition only needs where to start and
 * where to stop. Its first page asks `sinceParam` = the later of the run's `since` and the
 * window's `from`; it follows the source's tokens (sending the same `since` on every page, as an
 * unwindowed stream does) and ends at the first record modified at or after `until` — the listing
 * is sorted, so nothing after it belongs to the window, and the next window, which starts there
 * (inclusive), reads it. A record that does not normalize is delivered when listed before that
 * record (see `../keyset.ts` on such records at a boundary).
 *
 * The cursor wraps the source's token with the window's end, so a checkpoint cannot be resumed
 * under another window: `rw1.` + base64url JSON `{ t: token | null, u: until | null }`.
 */

const PREFIX = 'rw1.';

interface WindowedCursor {
  readonly token: string | null;
  readonly until: string | null;
}

function encode(cursor: WindowedCursor): string {
  return PREFIX + Buffer.from(JSON.stringify({ t: cursor.token, u: cursor.until })).toString('base64url');
}

function decode(cursor: string | null, window: TimeWindow | undefined): WindowedCursor {
  if (cursor === null) return { token: null, until: window?.until ?? null };
  let parsed: unknown;
  try {
    parsed = cursor.startsWith(PREFIX)
      ? JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'))
      : null;
  } catch {
    parsed = null;
  }
  const { t, u } = (parsed ?? {}) as { t?: unknown; u?: unknown };
  if (!(t === null || typeof t === 'string') || !(u === null || typeof u === 'string')) {
    throw new ClassifiedError(
      'permanent',
      `cursor \`${cursor.slice(0, 40)}\` is not a windowed cursor position`,
    );
  }
  if (window !== undefined && (window.until ?? null) !== u) {
    throw new ClassifiedError(
      'permanent',
      `the cursor reads up to ${u ?? 'the end'}, but its partition's window ends at ${window.until ?? 'the end'}`,
    );
  }
  return { token: t, until: u };
}

/** True when `cursor` is a windowed cursor of this module (a partition's checkpoint). */
export function isWindowedCursor(cursor: string | null): boolean {
  return cursor?.startsWith(PREFIX) ?? false;
}

/** The later of two ISO times; null is the open start. */
function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a >= b ? a : b;
}

/** Lists one page at `url`: the raw records, the body and the answered URL. */
export type ListPage = (url: string) => Promise<{ items: unknown[]; body: unknown; url: string }>;

/** A page of one window of a stable-cursor stream (module documentation). */
export async function fetchWindowedCursorPage(
  config: RestJsonConfig,
  cursor: string | null,
  since: string | null,
  window: TimeWindow | undefined,
  list: ListPage,
): Promise<FetchedPage> {
  const position = decode(cursor, window);
  const listed = await list(pageUrl(config, position.token, later(since, window?.from ?? null)));
  let end = listed.items.length;
  if (position.until !== null) {
    const bound = position.until;
    const at = listed.items.findIndex((raw) => {
      const normalized = normalizeRecord(config, raw);
      return normalized.ok && normalized.entity.version >= bound;
    });
    if (at !== -1) end = at;
  }
  // Asked one unit early from an exclusive filter (`sinceFor`), the listing may start before the
  // window: those records are the previous window's.
  const from = window?.from ?? null;
  const items = listed.items.slice(0, end).filter((raw) => {
    if (from === null) return true;
    const normalized = normalizeRecord(config, raw);
    return !normalized.ok || normalized.entity.version >= from;
  });
  const sourceNext = end < listed.items.length ? null : nextCursor(config, position.token, listed);
  const done = sourceNext === null;
  return {
    items,
    nextCursor: done ? null : encode({ token: sourceNext, until: position.until }),
    // The source's total counts its `since` listing to the end, past the window's end.
    remaining: done ? items.length : null,
  };
}
