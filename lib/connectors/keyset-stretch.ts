import type { KeysetPosition, KeysetStep } from './keyset-position.js';
import type { ListedKey } from './listed-key.js';
import { EMPTY_TALLY, sameTally, tallyPage } from './tie-check.js';
import { tieOrder } from './tie-order.js';

/*
 * Stretches read by position. Inside a tie group larger than a page (or across empty pages the
 * source says more follows), a run follows the source's own continuation; when that stretch ends
 * it lists the stretch once more and compares what both listings served (./tie-check.ts). The
 * same: the stretch was read whole. Different: the watermark is capped at the stretch's start,
 * and where members were skipped as served again, the group is read once more. See keyset.ts.
 */

/** The earlier of two times; undefined is no time. */
export function earlier(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a <= b ? a : b;
}

/**
 * The step after a page that ends a stretch read by position (the listing moved past its key, or
 * ended): list the stretch again to check it, then go on at `resume`. A stretch that cannot be
 * checked caps the watermark at its start at once. Pages outside a stretch go straight to `resume`.
 */
export function leaveStretch(
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
export function checkStep(
  position: KeysetPosition,
  check: NonNullable<KeysetPosition['check']>,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  guessed: boolean,
): KeysetStep {
  const deliver = keys.map(() => false);
  const { tally: got, reached } = tallyPage(check.got, keys, check.end);
  const over = reached || sourceNext === null || (guessed && keys.length === 0);
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
export function rereadStep(
  position: KeysetPosition,
  again: NonNullable<KeysetPosition['reread']>,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  guessed: boolean,
): KeysetStep {
  const at = position.at ?? '';
  const order = tieOrder(keys, at, position.stretch?.last, position.follow === undefined);
  const end = keys.findIndex((key) => key.ok && key.at > at);
  const deliver = keys.map((_, i) => (end === -1 || i < end) && order.again[i] === true);
  const ceiling = position.ceiling ?? null;
  if (end !== -1 || sourceNext === null || (guessed && keys.length === 0)) {
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
export function capped(
  resume: KeysetPosition | null,
  ceiling: string | null,
): Pick<KeysetStep, 'next' | 'ceiling'> {
  if (resume === null || ceiling === null) return { next: resume, ceiling };
  return { next: { ...resume, ceiling }, ceiling };
}
