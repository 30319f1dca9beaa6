import { METRIC } from '../observability/metrics.js';
import { fetchById } from './fetch-by-id.js';
import { commitAndContinue } from './page-work.js';
import { stepProvenance } from './request-trail.js';
import type { StepContext, StepResult } from './step.js';
import { sliceStart, tombstoneSlice } from './tombstone-cursor.js';

/**
 * The tombstone pass of a reconciliation run (DESIGN §7): after a complete listing, the items the
 * listing did not serve are candidates; each candidate's absence is confirmed with `fetchItem`
 * (404/410 = gone) before it is tombstoned, and one found is stored instead. The pass walks the
 * source's stored keys in slices — one page message each, checkpointed like any page — so it
 * scales to millions of items: no invocation holds more than a slice of keys, and none does more
 * than a bounded number of confirmations.
 *
 * Only a stable listing may lead here (keyset, or a cursor declared stable): over a listing paged
 * by position, an edit mid-run makes live entities look absent. On a keyed stream a page that
 * cannot be fetched fails the run (its next cursor needs the response), so a listing that reaches
 * its end is complete.
 */

/** Stored keys read per slice (keys and marks only: ~100 bytes each). */
export const TOMBSTONE_SLICE_KEYS = 500;
/** Absence confirmations (`fetchItem` requests) per slice: bounds one invocation's time. */
export const CONFIRMATIONS_PER_SLICE = 50;

type Confirmation = 'gone' | 'found' | 'unconfirmed';

/**
 * Asks the source for one candidate: gone (404/410, or answered with a record that is not this
 * one — moved away), found (and stored again), or unknown.
 */
async function confirm(context: StepContext, entityId: string): Promise<Confirmation> {
  const { deps, run } = context;
  const outcome = await fetchById(context, entityId);
  context.ensureOwned();
  if (outcome.kind !== 'ok') return 'unconfirmed';
  if (outcome.value.kind === 'gone') {
    context.log.info('absence confirmed', { entityId, how: outcome.value.how });
    return 'gone';
  }
  const { normalized } = outcome.value;
  if (normalized.ok) {
    await deps.items.loadAll(
      run.sourceId,
      [normalized.entity],
      run.runId,
      deps.clock.now(),
      run.epoch,
      stepProvenance(context),
    );
  }
  // Found (valid, invalid or too large to store): alive, whatever became of the write.
  await deps.items.markSeen(run.sourceId, entityId, run.runId);
  return 'found';
}

/** One slice of the tombstone pass: read keys, confirm the unseen, tombstone the gone, commit. */
export async function tombstonePage(context: StepContext): Promise<StepResult> {
  const { deps, run, message } = context;
  const after = sliceStart(message.cursor ?? tombstoneSlice(null));
  const slice = await deps.items.keySlice(run.sourceId, after, TOMBSTONE_SLICE_KEYS);
  let next = slice.next;
  const counts = { gone: 0, found: 0, unconfirmed: 0, tombstoned: 0 };
  let confirmations = 0;
  for (const item of slice.items) {
    if (item.lastSeenRunId === run.runId || item.tombstonedAt !== undefined) continue;
    if (confirmations === CONFIRMATIONS_PER_SLICE) {
      // The bound: the next slice starts at this candidate, after the key before it (which
      // exists: at least one candidate came before this one).
      next = slice.items[slice.items.indexOf(item) - 1]!.entityId;
      break;
    }
    confirmations += 1;
    const verdict = await confirm(context, item.entityId);
    counts[verdict] += 1;
    if (
      verdict === 'gone' &&
      (await deps.items.tombstone(run.sourceId, item.entityId, run.runId, deps.clock.now()))
    ) {
      counts.tombstoned += 1;
    }
  }
  await context.checkpointHook('afterLoad');
  deps.metrics.count(METRIC.tombstoned, counts.tombstoned);
  context.log.info('tombstone slice', { after, keys: slice.items.length, confirmations, ...counts });
  return commitAndContinue(context, {
    cursor: next === null ? null : tombstoneSlice(next),
    watermark: run.checkpoint?.watermark ?? null,
    processed: 0,
    errors: 0,
    total: null,
    tombstoned: counts.tombstoned,
  });
}
