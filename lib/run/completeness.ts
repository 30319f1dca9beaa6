import { z } from 'zod';

/**
 * A run's completeness check: at the end of a full or reconciliation run, what the source said it
 * holds, what the run read, and what the store holds for the source — counted in the store, never
 * taken from the run's own counters — judged in one verdict. A run never reports N of M with M
 * its own count: M is the source's word, and the store's count checks N.
 *
 * - `verified`: every entity the source counts was read, and is stored or in the dead-letter
 *   queue (or, when the source states no count, the store holds everything the run read).
 * - `short`: `shortBy` entities are neither; `reason` says where they went missing when it can
 *   tell: the source listed fewer records than it counts, or records the run read are not stored.
 *
 * The store also holds items the source no longer lists (deleted since an earlier run, until a
 * reconciliation tombstones them), so more stored than counted is not a shortfall.
 */
export const CompletenessSchema = z
  .strictObject({
    verdict: z.enum(['verified', 'short']),
    shortBy: z.number().int().nonnegative(),
    reason: z.string().nullable(),
    sourceCount: z.number().int().nullable().meta({
      description: 'Entities the source said it holds when the run listed them; null when it does not say',
    }),
    processed: z.number().int().meta({ description: 'Entities the run stored or found unchanged' }),
    failed: z.number().int().meta({ description: 'Records the run put in the dead-letter queue' }),
    stored: z.number().int().meta({ description: 'Live items of the source in the store at the run’s end' }),
    checkedAt: z.number().int().meta({ description: 'Epoch milliseconds' }),
    heldAt: z.string().nullable().optional().meta({
      description:
        'Where the run’s watermark holds because a listing was not proved whole (a window stopped before its end, or a tie group changed while read by position): the next incremental reads on from there',
    }),
  })
  .meta({ id: 'Completeness' });

export type Completeness = z.infer<typeof CompletenessSchema>;

/** What the check compares. */
export interface CompletenessCounts {
  readonly sourceCount: number | null;
  readonly processed: number;
  readonly failed: number;
  readonly stored: number;
  /** The key the run's watermark holds at because a listing was not proved whole; null: none. */
  readonly held?: string | null;
}

/** The verdict on a run's counts; see the module comment. */
export function judgeCompleteness(counts: CompletenessCounts, now: number): Completeness {
  const judged = judgeCounts(counts, now);
  const held = counts.held ?? null;
  if (held === null) return judged;
  if (judged.verdict === 'verified') return { ...judged, heldAt: held };
  return {
    ...judged,
    heldAt: held,
    reason: `${judged.reason}; the watermark holds at ${held}, where a listing was not proved whole, so the next incremental reads on from there`,
  };
}

function judgeCounts(counts: CompletenessCounts, now: number): Completeness {
  const { sourceCount, processed, failed, stored } = counts;
  const base = { sourceCount, processed, failed, stored, checkedAt: now };
  if (sourceCount !== null) {
    const unlisted = sourceCount - (processed + failed);
    if (unlisted > 0) {
      return {
        ...base,
        verdict: 'short',
        shortBy: unlisted,
        reason: `the source counts ${sourceCount} but listed ${processed + failed}`,
      };
    }
    const unstored = sourceCount - (stored + failed);
    if (unstored > 0) {
      return {
        ...base,
        verdict: 'short',
        shortBy: unstored,
        reason: `the source counts ${sourceCount}; the store holds ${stored} and ${failed} are dead letters`,
      };
    }
    return { ...base, verdict: 'verified', shortBy: 0, reason: null };
  }
  if (stored < processed) {
    return {
      ...base,
      verdict: 'short',
      shortBy: processed - stored,
      reason: `the run read ${processed} but the store holds ${stored}`,
    };
  }
  return { ...base, verdict: 'verified', shortBy: 0, reason: null };
}

/** The words a run summary ends with: nothing when verified. */
export function completenessWords(completeness: Completeness | undefined): string {
  if (completeness === undefined || completeness.verdict === 'verified') return '';
  return `, short by ${completeness.shortBy} (${completeness.reason})`;
}
