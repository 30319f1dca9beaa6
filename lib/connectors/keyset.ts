import { ClassifiedError } from '../retry/errors.js';
import { compactId, idSet } from '../run/compact-ids.js';
import type { Normalized, TimeWindow } from './contract.js';

/**
 * Keyset positions for streams ordered by modification time (DESIGN §4.9).
 *
 * A listing sorted by `updatedAt` but paged by position (`page=N`, a `Link` URL with a page
 * number) is not stable: an entity edited mid-run jumps to the end, every entity behind it moves
 * one slot forward, and the one at the next page boundary is never served. So a run's position
 * is a key instead — the `updatedAt` of the last delivered entity plus the ids delivered at that
 * instant — and each page asks the source for entities modified at or after it (`since`,
 * inclusive), skipping the ones this run already delivered at the key. An edit can then only
 * move an entity ahead of the position, where the run reads it again.
 *
 * Ties: many entities can share one `updatedAt` (bulk edits, second-precision times), more than
 * a page holds. Asking `since=<key>` again would return the same page forever, so inside such a
 * tie group the position follows the source's own continuation of the `since=<key>` listing
 * (its next page number, cursor or URL) until the listing moves past the key. That stretch is
 * positional again: if a delivered member of the group is edited or deleted meanwhile, an
 * undelivered member can shift onto a page already read. The position therefore records the
 * tie's time as a ceiling, and the run's watermark never passes it, so the next incremental run
 * re-reads the group. This is the residual window the README states.
 *
 * Windows: one partition of a partitioned run reads `[from, until)` of modification time. It
 * starts at the later of the run's `since` and `from`, and its stream ends at the first listed
 * record modified at or after `until` — the listing is sorted, so nothing after it belongs to the
 * window. A tie group at `until` is excluded whole (the next window starts `since=until` and reads
 * all of it), so every valid entity of a static listing falls in exactly one window. A record
 * that does not normalize has no time the run can read: the window delivers it when it is listed
 * before the record that ends the window. If its true time is at or after `until`, the next
 * window lists it too and dead-letters it again (the same entry); skipping it there instead could
 * lose it for good when the record that ended the window is edited away meanwhile.
 */

/** A run's position in a keyed stream. */
export interface KeysetPosition {
  /** `updatedAt` (the normalized version) of the last delivered entity; null: the start of the stream. */
  readonly at: string | null;
  /** Ids (or, for invalid records, refs) already delivered at `at`: skipped when listed again. */
  readonly ids: readonly string[];
  /** Inside a tie group larger than a page: the source's continuation of the `since=at` listing. */
  readonly follow?: string;
  /**
   * Inside such a tie group: the ids delivered at `at` before the run began following it, skipped
   * on every page of it (records that do not normalize may list before them and push them on).
   */
  readonly before?: readonly string[];
  /** The earliest tie time paged through by position: the run's watermark must not pass it. */
  readonly ceiling?: string;
  /**
   * The most records one page of this run held: a later page with fewer means the listing had
   * nothing more when it was read (the source caps page sizes silently, so the requested size
   * cannot tell). Without it a source edited faster than one record per request would never end
   * a page-number listing, which only an empty page ends.
   */
  readonly full?: number;
  /** A partition's window bound: the stream ends before the first record modified at or after it. */
  readonly until?: string;
}

const PREFIX = 'ks1.';

/**
 * The first position of a run: its `since` (null: the whole stream, and no `since` sent at all).
 * A partition starts at the later of `since` and its window's `from`, and keeps the window's
 * `until` as its bound.
 */
export function initialPosition(since: string | null, window?: TimeWindow): KeysetPosition {
  const from = window?.from ?? null;
  const at = since === null ? from : from === null || from <= since ? since : from;
  const until = window?.until ?? null;
  return until === null ? { at, ids: [] } : { at, ids: [], until };
}

/**
 * Encodes a position as the cursor the engine checkpoints (opaque to it). Long ids are kept as
 * digests (lib/run/compact-ids.ts), so the cursor's size does not depend on the source's id length.
 */
export function encodePosition(position: KeysetPosition): string {
  const compact: KeysetPosition = {
    ...position,
    ids: position.ids.map(compactId),
    ...(position.before ? { before: position.before.map(compactId) } : {}),
  };
  return PREFIX + Buffer.from(JSON.stringify(compact)).toString('base64url');
}

/**
 * The position a cursor encodes; a null cursor is the run's (or the partition's) start.
 *
 * @param window - the partition's window, when the run is partitioned: a cursor must carry its
 *   `until`, since the position keeps the bound.
 * @throws ClassifiedError (permanent) when the cursor is not a keyset position: a checkpoint
 *   written under another pagination (the config changed), which must not be guessed at; or when
 *   it belongs to another window than the partition's.
 */
export function decodePosition(
  cursor: string | null,
  since: string | null,
  window?: TimeWindow,
): KeysetPosition {
  if (cursor === null) return initialPosition(since, window);
  const position = parsePosition(cursor);
  if (position === null) {
    throw new ClassifiedError('permanent', `cursor \`${cursor.slice(0, 40)}\` is not a keyset position`);
  }
  if (window !== undefined && (window.until ?? undefined) !== position.until) {
    throw new ClassifiedError(
      'permanent',
      `the cursor reads up to ${position.until ?? 'the end'}, but its partition's window ends at ${window.until ?? 'the end'}`,
    );
  }
  return position;
}

function parsePosition(cursor: string): KeysetPosition | null {
  if (!cursor.startsWith(PREFIX)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'));
    return isPosition(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isPosition(value: unknown): value is KeysetPosition {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    (p.at === null || typeof p.at === 'string') &&
    Array.isArray(p.ids) &&
    p.ids.every((id) => typeof id === 'string') &&
    (p.follow === undefined || typeof p.follow === 'string') &&
    (p.before === undefined || (Array.isArray(p.before) && p.before.every((id) => typeof id === 'string'))) &&
    (p.ceiling === undefined || typeof p.ceiling === 'string') &&
    (p.full === undefined || typeof p.full === 'number') &&
    (p.until === undefined || typeof p.until === 'string')
  );
}

/** One listed record as the keyset sees it: its key when it normalizes, else its ref (if any). */
export type ListedKey =
  | { readonly ok: true; readonly id: string; readonly at: string }
  | { readonly ok: false; readonly ref: string | null };

/** The key of a raw record, through the connector's own normalization. */
export function listedKey(normalized: Normalized): ListedKey {
  return normalized.ok
    ? { ok: true, id: normalized.entity.id, at: normalized.entity.version }
    : { ok: false, ref: normalized.ref };
}

/** What one page means for the position. */
export interface KeysetStep {
  /** Per listed record: deliver it (true) or skip it as already delivered by this run (false). */
  readonly deliver: readonly boolean[];
  /** The next position; null when the stream is complete. */
  readonly next: KeysetPosition | null;
  /** The run's watermark must not pass this (a tie group was paged by position); null: no cap. */
  readonly ceiling: string | null;
}

function earlier(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a <= b ? a : b;
}

/**
 * Advances a position over one page of the `since=position.at` listing (or of its continuation).
 * With a window bound (`position.until`), only the records listed before the first one modified
 * at or after it are delivered, and that record ends the stream.
 *
 * @param keys - the page's records in listing order (oldest update first).
 * @param sourceNext - the source's own next page of this listing (page number, cursor, URL),
 *   null when the source says the listing ended.
 * @throws ClassifiedError (permanent) when the page holds records older than the position: the
 *   source ignores the `since` filter or does not sort by modification time, and reading on would
 *   loop or skip silently.
 */
export function advance(
  position: KeysetPosition,
  keys: readonly ListedKey[],
  sourceNext: string | null,
): KeysetStep {
  const delivered = idSet([...position.ids, ...(position.before ?? [])]);
  const { at, until } = position;
  let bounded = false;
  const deliver = keys.map((key) => {
    if (bounded) return false;
    if (key.ok && at !== null && key.at < at) {
      throw new ClassifiedError(
        'permanent',
        `the source listed a record modified at ${key.at} when asked for records since ${at}: its listing is not filtered and ordered by modification time`,
      );
    }
    if (key.ok && until !== undefined && key.at >= until) {
      bounded = true;
      return false;
    }
    if (at === null) return true;
    if (key.ok) return !(key.at === at && delivered.has(key.id));
    return key.ref === null || !delivered.has(key.ref);
  });
  const ceiling = position.ceiling ?? null;
  const short = position.full !== undefined && keys.length < position.full;
  if (bounded || keys.length === 0 || sourceNext === null || short) return { deliver, next: null, ceiling };
  const full = Math.max(position.full ?? 0, keys.length);
  const bound = until === undefined ? {} : { until };

  let last: string | null = null;
  for (const key of keys) if (key.ok && (last === null || key.at > last)) last = key.at;

  if (last === null || last === at) {
    // The whole page is one tie group (or unkeyable): follow the source's own continuation.
    const tieAt = last ?? at;
    // Ids delivered at the key before the run began following the tie group by position: records
    // that do not normalize can push them past the first page of `since=at`, onto any page.
    const before =
      tieAt === null || tieAt !== at
        ? []
        : position.follow === undefined
          ? position.ids
          : (position.before ?? []);
    const next: KeysetPosition = {
      at: tieAt,
      ids: pageIdsAt(keys, tieAt),
      ...(before.length === 0 ? {} : { before: [...before] }),
      follow: sourceNext,
      full,
      ...(tieAt === null ? {} : { ceiling: earlier(position.ceiling, tieAt) }),
      ...bound,
    };
    return { deliver, next, ceiling: next.ceiling ?? null };
  }
  const next: KeysetPosition = {
    at: last,
    ids: pageIdsAt(keys, last),
    full,
    ...(position.ceiling === undefined ? {} : { ceiling: position.ceiling }),
    ...bound,
  };
  return { deliver, next, ceiling };
}

/**
 * Ids of the page's records at `at`, plus the refs of invalid records listed after the last of
 * them: `since=at` lists those again, and they were delivered (dead-lettered) already.
 */
function pageIdsAt(keys: readonly ListedKey[], at: string | null): string[] {
  const ids: string[] = [];
  let trailing: string[] = [];
  for (const key of keys) {
    if (key.ok) {
      trailing = [];
      if (key.at === at) ids.push(key.id);
    } else if (key.ref !== null) {
      trailing.push(key.ref);
    }
  }
  return [...ids, ...trailing];
}
