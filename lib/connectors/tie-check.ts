import { createHash } from 'node:crypto';
import type { ListedKey } from './listed-key.js';

/**
 * Checking that a stretch of a listing read by position was read whole (see `./keyset.ts`).
 *
 * Inside a tie group larger than a page (or across pages a source answered empty), a run follows
 * the source's own continuation, which is positional: when a record the run already listed leaves
 * the stretch meanwhile (edited, so it moves past every other record; or deleted), every record
 * after it moves one place up, and the one at the next page's edge is never served. Holding the
 * watermark at the stretch for good would make every later run re-read everything after it.
 *
 * So once the stretch ends, the run lists it a second time from its start and compares a tally of
 * what each listing served in it: the count of records and a sum of hashes of `(id, version)`.
 * A record missed by the first listing means some record the first listing served had left the
 * stretch before the second listing began; the second cannot serve it at that version, since an
 * edit gives a record a time after every other and records are never added back in the past. The
 * tallies then differ, and the watermark stays held at the stretch (the next run re-reads it).
 * Equal tallies mean the first listing missed nothing, and the watermark moves on.
 *
 * What this cannot see: rows the source lists positionally but never shows (dropped after its
 * limit as the caller may not see them) can shift the listing unseen; only when such a shift
 * hides the same record from both listings does the check pass wrongly. A record that does not
 * normalize has no version to tally, so a stretch holding one is never taken as whole.
 */

/** What one listing of a stretch served: count, and sum of record hashes modulo 2^64 (hex). */
export interface Tally {
  readonly count: number;
  readonly sum: string;
  /** A record that does not normalize was listed: the stretch cannot be checked. */
  readonly broken?: true;
}

/** The tally of nothing listed yet. */
export const EMPTY_TALLY: Tally = { count: 0, sum: '0' };

const MOD = 1n << 64n;

function hashOf(id: string, version: string): bigint {
  const digest = createHash('sha256').update(id).update('\u0000').update(version).digest();
  return digest.readBigUInt64BE(0);
}

/**
 * Adds the records of one page that fall in the stretch: listed before the first valid record at
 * or after `end` (null: no end). Returns the tally and whether `end` was reached on this page.
 */
export function tallyPage(
  tally: Tally,
  keys: readonly ListedKey[],
  end: string | null,
): { tally: Tally; reached: boolean } {
  let count = tally.count;
  let sum = BigInt(`0x${tally.sum}`);
  let broken = tally.broken === true;
  for (const key of keys) {
    if (key.ok && end !== null && key.at >= end) {
      return { tally: make(count, sum, broken), reached: true };
    }
    if (!key.ok) {
      broken = true;
      continue;
    }
    count += 1;
    sum = (sum + hashOf(key.id, key.at)) % MOD;
  }
  return { tally: make(count, sum, broken), reached: false };
}

function make(count: number, sum: bigint, broken: boolean): Tally {
  return { count, sum: sum.toString(16), ...(broken ? { broken: true as const } : {}) };
}

/** True when two listings of a stretch served the same records at the same versions. */
export function sameTally(a: Tally, b: Tally): boolean {
  return !a.broken && !b.broken && a.count === b.count && a.sum === b.sum;
}

/** A tally as read back from a cursor (the engine's checkpoint), or null when it is not one. */
export function isTally(value: unknown): value is Tally {
  if (typeof value !== 'object' || value === null) return false;
  const t = value as Record<string, unknown>;
  return (
    typeof t.count === 'number' &&
    typeof t.sum === 'string' &&
    /^[0-9a-f]{1,16}$/.test(t.sum) &&
    (t.broken === undefined || t.broken === true)
  );
}
