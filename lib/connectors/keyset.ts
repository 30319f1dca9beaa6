import { ClassifiedError } from '../retry/errors.js';
import { compactId, idSet } from '../run/compact-ids.js';
import type { Normalized, TimeWindow } from './contract.js';
import type { ListedKey } from './listed-key.js';
import { type SinceBound, type SincePrecision, sinceFor } from './source-timing.js';
import { EMPTY_TALLY, isTally, sameTally, type Tally, tallyPage } from './tie-check.js';
import { tieOrder } from './tie-order.js';
import { unidentifiedRef } from './unidentified.js';

export type { ListedKey };

/**
 * Keyset positions for streams ordered by modification time.
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
 * (its next page number, cursor or URL) until the listing moves past the key; so it does across
 * pages the source answered empty while saying more follows. That stretch is positional again:
 * if a delivered member of the group is edited or deleted meanwhile, an undelivered member can
 * shift onto a page already read. So when the stretch ends, the run lists it once more and
 * compares what both listings served (`./tie-check.ts`): the same, and the stretch was read
 * whole; different, and the position records the stretch's start as a ceiling the run's
 * watermark never passes, so the next incremental run re-reads from there. A source that changes
 * its page size meanwhile makes page numbers serve members again; where the group lists in id
 * order, those are recognised and skipped (`./tie-order.ts`).
 *
 * Short pages: many APIs cut a page to its limit and then drop rows the caller may not see, so a
 * page shorter than the last, or empty, says nothing while the source's continuation (cursor,
 * next URL, `Link`, a total not reached) says more follows: the stream goes on. Only a stream
 * whose continuation is a guess (page numbers, no total) ends on a short page, after re-listing
 * from its last key once, or on an empty one.
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
   * The most records one page of this run held. For a stream without a continuation of the
   * source's own (page numbers and no total), a later page with fewer may mean the listing had
   * nothing more when it was read (the source caps page sizes silently, so the requested size
   * cannot tell): the run re-lists once to decide ({@link KeysetPosition.recheck}). Without it a
   * source edited faster than one record per request would never end such a listing, which only
   * an empty page ends.
   */
  readonly full?: number;
  /**
   * This page re-lists after a short page of a stream without a continuation of its own: when it
   * brings nothing new, or is short again, the stream ends; a full page goes on reading.
   */
  readonly recheck?: true;
  /** A partition's window bound: the stream ends before the first record modified at or after it. */
  readonly until?: string;
  /**
   * While following the source's continuation from `from` (inside a tie group, or across empty
   * pages): what that listing served so far, to check it afterwards (`./tie-check.ts`).
   */
  readonly stretch?: {
    readonly from: string;
    readonly tally: Tally;
    /** The greatest member id listed, while the group lists in id order (`./tie-order.ts`). */
    readonly last?: string;
    /** Members were skipped as served again: a second listing that differs re-reads the group. */
    readonly skipped?: true;
  };
  /**
   * Reading a tie group once more, after members were skipped as served again and its second
   * listing differed: only the members its order marks as served again are delivered (those the
   * first listing may have skipped wrongly), then the stream goes on at `resume`.
   */
  readonly reread?: { readonly resume: KeysetPosition | null };
  /**
   * Listing such a stretch a second time, from `at` through the source's continuation, up to the
   * first record at or after `end` (null: the listing's end). `resume` is where the stream goes on
   * afterwards (null: it ends); nothing is delivered meanwhile.
   */
  readonly check?: {
    readonly end: string | null;
    readonly want: Tally;
    readonly got: Tally;
    readonly resume: KeysetPosition | null;
    /** The first listing skipped members as served again (`stretch.skipped`). */
    readonly skipped?: true;
  };
}

const PREFIX = 'ks1.';

/**
 * The time before every record: where a stretch read by position starts when the stream's very
 * first page came back empty with a continuation. Listed again from here, and held here when the
 * listings differ, so the next run reads the whole stream.
 */
const START_OF_TIME = '1970-01-01T00:00:00.000Z';

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
  return PREFIX + Buffer.from(JSON.stringify(compacted(position))).toString('base64url');
}

/** The position with its ids (and those of the position a stretch check resumes at) compacted. */
function compacted(position: KeysetPosition): KeysetPosition {
  const { check, reread } = position;
  return {
    ...position,
    ids: position.ids.map(compactId),
    ...(position.before ? { before: position.before.map(compactId) } : {}),
    ...(check ? { check: { ...check, resume: check.resume === null ? null : compacted(check.resume) } } : {}),
    ...(reread ? { reread: { resume: reread.resume === null ? null : compacted(reread.resume) } } : {}),
  };
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
    (p.reread === undefined || isReread(p.reread)) &&
    (p.full === undefined || typeof p.full === 'number') &&
    (p.recheck === undefined || p.recheck === true) &&
    (p.until === undefined || typeof p.until === 'string') &&
    (p.stretch === undefined || isStretch(p.stretch)) &&
    (p.check === undefined || isCheck(p.check))
  );
}

function isStretch(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    typeof s.from === 'string' &&
    isTally(s.tally) &&
    (s.last === undefined || typeof s.last === 'string') &&
    (s.skipped === undefined || s.skipped === true)
  );
}

function isReread(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return r.resume === null || isPosition(r.resume);
}

function isCheck(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    (c.end === null || typeof c.end === 'string') &&
    isTally(c.want) &&
    isTally(c.got) &&
    (c.skipped === undefined || c.skipped === true) &&
    (c.resume === null || isPosition(c.resume))
  );
}

/**
 * The key of a raw record, through the connector's own normalization. A record that does not
 * normalize and has no readable id gets its content's ref (`./unidentified.ts`) when `raw` is given.
 */
export function listedKey(normalized: Normalized, raw?: unknown): ListedKey {
  if (normalized.ok) return { ok: true, id: normalized.entity.id, at: normalized.entity.version };
  return { ok: false, ref: normalized.ref ?? (raw === undefined ? null : unidentifiedRef(raw)) };
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

/** What a connector knows of the listing a page came from. */
export interface ListingOptions {
  /**
   * True when the source gives no continuation of its own and the connector guesses one (the
   * next page number, when the source sends neither a next link nor a total): then an empty
   * page ends the stream, and a short page ends it after one re-listing. Default false: the
   * source said more follows (a cursor, a next URL, a `Link`, a total not yet reached), and the
   * stream goes on through short and empty pages until it says otherwise — many APIs cut a page
   * to its limit and then drop the rows the caller may not see.
   */
  readonly guessed?: boolean;
  /**
   * The finest time the source's `since` filter tells apart. With `'s'` the page was asked from
   * the position's time cut to the second, and records listed between that and the position's
   * time come before the key in listing order: already delivered, skipped.
   */
  readonly precision?: SincePrecision;
  /**
   * With `'exclusive'`, the page was asked one precision unit before the position's time (see
   * `sinceFor`), and records listed before the key are skipped the same way.
   */
  readonly bound?: SinceBound;
}

/**
 * Advances a position over one page of the `since=position.at` listing (or of its continuation).
 * With a window bound (`position.until`), only the records listed before the first one modified
 * at or after it are delivered, and that record ends the stream.
 *
 * @param keys - the page's records in listing order (oldest update first).
 * @param sourceNext - the next page of this listing (page number, cursor, URL), null when the
 *   source says the listing ended.
 * @param continuation - whether `sourceNext` is the source's word or the connector's guess.
 * @throws ClassifiedError (permanent) when the page holds records older than the position: the
 *   source ignores the `since` filter or does not sort by modification time, and reading on would
 *   loop or skip silently.
 */
export function advance(
  position: KeysetPosition,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  continuation: ListingOptions = {},
): KeysetStep {
  refuseUnsorted(position.at, keys, continuation);
  if (position.check !== undefined)
    return checkStep(position, position.check, keys, sourceNext, continuation);
  if (position.reread !== undefined)
    return rereadStep(position, position.reread, keys, sourceNext, continuation);
  const delivered = idSet([...position.ids, ...(position.before ?? [])]);
  const { at, until } = position;
  // Following a tie group: members a changed page size serves again, recognised by their order.
  const following = position.follow !== undefined && position.stretch !== undefined && at !== null;
  const order = following ? tieOrder(keys, at, position.stretch?.last, false) : undefined;
  const tallied = order === undefined ? keys : keys.filter((_, i) => !order.again[i]);
  const skipped = position.stretch?.skipped === true || order?.again.includes(true) === true;
  let bounded = false;
  const deliver = keys.map((key, index) => {
    if (bounded) return false;
    if (order?.again[index]) return false;
    if (key.ok && until !== undefined && key.at >= until) {
      bounded = true;
      return false;
    }
    if (at === null) return true;
    // Listed only because the source reads `since` at a coarser precision: before the key.
    if (key.ok && key.at < at) return false;
    if (key.ok) return !(key.at === at && delivered.has(key.id));
    return key.ref === null || !delivered.has(key.ref);
  });
  const ceiling = position.ceiling ?? null;
  const guessed = continuation.guessed === true;
  const short = position.full !== undefined && keys.length < position.full;
  if (
    bounded ||
    sourceNext === null ||
    (guessed && (keys.length === 0 || (position.recheck && (short || !deliver.includes(true)))))
  ) {
    return { deliver, ...leaveStretch(position, tallied, skipped, until ?? null, null) };
  }
  const recheck = guessed && short ? { recheck: true as const } : {};
  const full = Math.max(position.full ?? 0, keys.length);
  const bound = until === undefined ? {} : { until };

  let last: string | null = null;
  for (const key of keys) {
    if (key.ok && (at === null || key.at >= at) && (last === null || key.at > last)) last = key.at;
  }

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
    // What the stretch read by position served, from its first page (`since=at`) on, each member once.
    const greatest = following || tieAt === null ? order?.last : tieOrder(keys, tieAt, undefined, true).last;
    // An empty page at the very start of the stream: the stretch starts before any record.
    const from = tieAt ?? (keys.length === 0 ? START_OF_TIME : null);
    const stretch =
      from === null
        ? {}
        : {
            stretch: {
              from,
              tally: tallyPage(position.stretch?.tally ?? EMPTY_TALLY, tallied, null).tally,
              ...(greatest === undefined ? {} : { last: greatest }),
              ...(skipped ? { skipped: true as const } : {}),
            },
          };
    const next: KeysetPosition = {
      at: tieAt,
      ids: pageIdsAt(keys, tieAt),
      ...(before.length === 0 ? {} : { before: [...before] }),
      follow: sourceNext,
      full,
      ...(position.ceiling === undefined ? {} : { ceiling: position.ceiling }),
      ...bound,
      ...recheck,
      ...stretch,
    };
    return { deliver, next, ceiling };
  }
  const next: KeysetPosition = {
    at: last,
    ids: pageIdsAt(keys, last),
    full,
    ...(position.ceiling === undefined ? {} : { ceiling: position.ceiling }),
    ...bound,
    ...recheck,
  };
  return { deliver, ...leaveStretch(position, tallied, skipped, last, next) };
}

function refuseUnsorted(at: string | null, keys: readonly ListedKey[], listing: ListingOptions): void {
  if (at === null) return;
  const asked = sinceFor(at, listing.precision, listing.bound);
  const older = keys.find((key) => key.ok && key.at < asked);
  if (older?.ok) {
    throw new ClassifiedError(
      'permanent',
      `the source listed a record modified at ${older.at} when asked for records since ${asked}: its listing is not filtered and ordered by modification time`,
    );
  }
}

/**
 * The step after a page that ends a stretch read by position (the listing moved past its key, or
 * ended): list the stretch again to check it, then go on at `resume`. A stretch that cannot be
 * checked caps the watermark at its start at once. Pages outside a stretch go straight to `resume`.
 */
function leaveStretch(
  position: KeysetPosition,
  keys: readonly ListedKey[],
  skipped: boolean,
  end: string | null,
  resume: KeysetPosition | null,
): Pick<KeysetStep, 'next' | 'ceiling'> {
  const confirmed = position.ceiling ?? null;
  const stretch = position.follow === undefined ? undefined : position.stretch;
  if (stretch === undefined) return { next: resume, ceiling: confirmed };
  const want = tallyPage(stretch.tally, keys, end).tally;
  if (want.broken) {
    const ceiling = earlier(position.ceiling, stretch.from) ?? null;
    return skipped ? reread(position, stretch.from, ceiling, resume) : capped(resume, ceiling);
  }
  const next: KeysetPosition = {
    at: stretch.from,
    ids: [],
    check: { end, want, got: EMPTY_TALLY, resume, ...(skipped ? { skipped: true as const } : {}) },
    // The page size seen so far: a connector counting pages by it must count the same again.
    ...(position.full === undefined ? {} : { full: position.full }),
    ...(position.ceiling === undefined ? {} : { ceiling: position.ceiling }),
    ...(position.until === undefined ? {} : { until: position.until }),
  };
  return { next, ceiling: confirmed };
}

/** One page of the second listing of a stretch: nothing is delivered, its records are tallied. */
function checkStep(
  position: KeysetPosition,
  check: NonNullable<KeysetPosition['check']>,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  continuation: ListingOptions,
): KeysetStep {
  const deliver = keys.map(() => false);
  const { tally: got, reached } = tallyPage(check.got, keys, check.end);
  const over = reached || sourceNext === null || (continuation.guessed === true && keys.length === 0);
  if (!over) {
    const next: KeysetPosition = { ...position, follow: sourceNext, check: { ...check, got } };
    return { deliver, next, ceiling: position.ceiling ?? null };
  }
  if (sameTally(check.want, got)) return { deliver, next: check.resume, ceiling: position.ceiling ?? null };
  const ceiling = earlier(position.ceiling, position.at ?? undefined) ?? null;
  if (check.skipped && position.at !== null)
    return { deliver, ...reread(position, position.at, ceiling, check.resume) };
  return { deliver, ...capped(check.resume, ceiling) };
}

/**
 * Reads a tie group once more from `from` when members were skipped as served again and the
 * group's listings disagree: the source may not list ties in id order after all, and a member
 * skipped wrongly would be skipped by every later run too. The watermark stays at `ceiling`.
 */
function reread(
  position: KeysetPosition,
  from: string,
  ceiling: string | null,
  resume: KeysetPosition | null,
): Pick<KeysetStep, 'next' | 'ceiling'> {
  const next: KeysetPosition = {
    at: from,
    ids: [],
    reread: { resume: resume === null || ceiling === null ? resume : { ...resume, ceiling } },
    ...(position.full === undefined ? {} : { full: position.full }),
    ...(ceiling === null ? {} : { ceiling }),
    ...(position.until === undefined ? {} : { until: position.until }),
  };
  return { next, ceiling };
}

/**
 * One page of that reading: only the group's members its order marks as served again are
 * delivered (in a listing kept in id order, none; otherwise those the first listing skipped).
 * When the listing leaves the group (or ends), the stream goes on at `resume`.
 */
function rereadStep(
  position: KeysetPosition,
  again: NonNullable<KeysetPosition['reread']>,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  continuation: ListingOptions,
): KeysetStep {
  const at = position.at ?? '';
  const order = tieOrder(keys, at, position.stretch?.last, position.follow === undefined);
  const end = keys.findIndex((key) => key.ok && key.at > at);
  const deliver = keys.map((_, i) => (end === -1 || i < end) && order.again[i] === true);
  const ceiling = position.ceiling ?? null;
  if (end !== -1 || sourceNext === null || (continuation.guessed === true && keys.length === 0)) {
    return { deliver, ...capped(again.resume, ceiling) };
  }
  const next: KeysetPosition = {
    ...position,
    follow: sourceNext,
    stretch: { from: at, tally: EMPTY_TALLY, ...(order.last === undefined ? {} : { last: order.last }) },
  };
  return { deliver, next, ceiling };
}

/** `resume` with the watermark capped at `ceiling` from now on. */
function capped(resume: KeysetPosition | null, ceiling: string | null): Pick<KeysetStep, 'next' | 'ceiling'> {
  if (resume === null || ceiling === null) return { next: resume, ceiling };
  return { next: { ...resume, ceiling }, ceiling };
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
