import { ClassifiedError } from '../retry/errors.js';
import { compactId } from '../run/compact-ids.js';
import type { TimeWindow } from './contract.js';
import { isTally, type Tally } from './tie-check.js';

/*
 * A run's position in a keyed stream (see keyset.ts for what it is for), and the opaque cursor
 * the engine checkpoints it as.
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
   * Inside a stretch whose source continuation expired (`./keyset-expiry.ts`): the run lists the
   * stretch again from `since=at`, passing over the first `skip` records by position (what the
   * stretch served before), and follows the new listing's continuation from there. `count` is the
   * stretch's tally when it restarted: a second restart needs the stretch to have moved past it.
   */
  readonly restart?: { readonly count: number; readonly skip: number };
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

/** What one page means for the position. */
export interface KeysetStep {
  /** Per listed record: deliver it (true) or skip it as already delivered by this run (false). */
  readonly deliver: readonly boolean[];
  /** The next position; null when the stream is complete. */
  readonly next: KeysetPosition | null;
  /** The run's watermark must not pass this (a tie group was paged by position); null: no cap. */
  readonly ceiling: string | null;
}

const PREFIX = 'ks1.';

/**
 * The time before every record: where a stretch read by position starts when the stream's very
 * first page came back empty with a continuation. Listed again from here, and held here when the
 * listings differ, so the next run reads the whole stream.
 */
export const START_OF_TIME = '1970-01-01T00:00:00.000Z';

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
    (p.restart === undefined || isRestart(p.restart)) &&
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

function isRestart(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return Number.isSafeInteger(r.count) && Number.isSafeInteger(r.skip) && (r.skip as number) >= 0;
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
