import pLimit from 'p-limit';
import { FETCHES_BY_ID_PER_STEP, RETRY_CONCURRENCY } from '../../config/constants.js';
import { METRIC } from '../../observability/metrics.js';
import { deferPage } from '../chain/deferral.js';
import type { StepContext, StepResult } from '../step/context.js';
import { type Confirmation, confirmAbsence } from './confirm-absence.js';
import { fileItemDeadLetter } from './item-dead-letters.js';
import { commitAndContinue } from './page-work.js';
import { seenScope } from './seen-listing.js';
import { listedPagesOf, sliceStart, tombstoneSlice } from './tombstone-cursor.js';

/**
 * The tombstone pass of a reconciliation run: after a complete listing, the items the
 * listing did not serve are candidates; each candidate's absence is confirmed with `fetchItem`
 * (404/410, or an answer that is another record = gone; see `fetch-by-id.ts`) before it is
 * tombstoned, and one found is stored instead. The pass walks the
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
/**
 * Absence confirmations (`fetchItem` requests) per slice, made in waves of concurrent requests:
 * as many as fit one invocation when every one of them runs through all its retries.
 */
export const CONFIRMATIONS_PER_SLICE = FETCHES_BY_ID_PER_STEP;

type SliceKey = {
  readonly entityId: string;
  readonly lastSeenRunId?: string;
  readonly tombstonedAt?: number;
};

/**
 * The slice's candidates — stored keys the listing did not serve and not yet tombstoned — up to
 * {@link CONFIRMATIONS_PER_SLICE}, and where the next slice starts: after the key before the
 * first candidate left out, or where the keys read end.
 */
function candidatesOf(
  run: { readonly runId: string },
  keys: readonly SliceKey[],
  next: string | null,
  seen: ReadonlySet<string>,
): { candidates: SliceKey[]; next: string | null } {
  const candidates: SliceKey[] = [];
  for (const [index, key] of keys.entries()) {
    if (seen.has(key.entityId) || key.lastSeenRunId === run.runId || key.tombstonedAt !== undefined) continue;
    // The key before it exists: at least one candidate came before this one.
    if (candidates.length === CONFIRMATIONS_PER_SLICE) return { candidates, next: keys[index - 1]!.entityId };
    candidates.push(key);
  }
  return { candidates, next };
}

/**
 * One slice of the tombstone pass: read keys, confirm the unseen, tombstone the gone, commit. A
 * confirmation that could not be made is never counted as done: one that must wait (a long
 * `Retry-After`, the credential's rate budget spent) ends the slice there — the next slice starts
 * at it, or, when nothing came of this one, the slice waits as a deferred page; one that failed
 * for good is filed as a dead letter of its entity (its state at the source is unknown) and
 * counted as the run's error.
 */
export async function tombstonePage(context: StepContext): Promise<StepResult> {
  const { deps, run, message } = context;
  const cursor = message.cursor ?? tombstoneSlice(null, null);
  const after = sliceStart(cursor);
  const listedPages = listedPagesOf(cursor);
  const slice = await deps.items.keySlice(run.sourceId, after, TOMBSTONE_SLICE_KEYS);
  const seen = await seenInSlice(context, listedPages, slice.items);
  const { candidates, next: sliceNext } = candidatesOf(run, slice.items, slice.next, seen);
  const limit = pLimit(RETRY_CONCURRENCY);
  const verdicts = await Promise.all(
    candidates.map((key) => limit(() => confirmAbsence(context, key.entityId))),
  );
  context.ensureOwned();
  const firstDeferred = verdicts.findIndex((v) => v.kind === 'defer');
  const deferral = verdicts[firstDeferred];
  // Answers after the first deferral count (tombstones and marks are written); failures there are
  // asked again with the next slice rather than filed.
  const settled = firstDeferred === -1 ? verdicts.length : firstDeferred;
  const failed = verdicts
    .slice(0, settled)
    .flatMap((v, index) => (v.kind === 'failed' ? [{ entityId: candidates[index]!.entityId, ...v }] : []));
  const answered = verdicts.filter((v) => v.kind === 'gone' || v.kind === 'found').length;
  if (deferral?.kind === 'defer' && answered === 0 && failed.length === 0) {
    return deferPage(context, deferral.untilMs, deferral.reason, deferral.attempts);
  }
  for (const failure of failed) await fileUnconfirmed(context, failure);
  const tombstoned = verdicts.filter((v) => v.kind === 'gone' && v.tombstoned).length;
  const next = firstDeferred === -1 ? sliceNext : keyBefore(slice.items, candidates[firstDeferred]!, after);
  await context.checkpointHook('afterLoad');
  deps.metrics.count(METRIC.tombstoned, tombstoned);
  context.log.info('tombstone slice', {
    after,
    keys: slice.items.length,
    confirmations: candidates.length,
    ...countsOf(verdicts),
    tombstoned,
  });
  return commitAndContinue(context, {
    // A deferral at the slice's first candidate starts the next slice where this one started.
    cursor: next === null && firstDeferred === -1 ? null : tombstoneSlice(next, listedPages),
    watermark: run.checkpoint?.watermark ?? null,
    processed: 0,
    errors: failed.length,
    total: null,
    tombstoned,
  });
}

/**
 * The slice's keys the listing served, from the listing's seen records (one record per page,
 * merged by key at the first slice). A key the listing wrote carries the run as its
 * `lastSeenRunId` too; a cursor without the listing's page count (a run begun by a version that
 * marked every item) has marks only.
 */
async function seenInSlice(
  context: StepContext,
  listedPages: number | null,
  keys: readonly SliceKey[],
): Promise<ReadonlySet<string>> {
  const first = keys[0]?.entityId;
  const last = keys.at(-1)?.entityId;
  if (listedPages === null || first === undefined || last === undefined) return new Set();
  const { deps } = context;
  return deps.seen.index.seenBetween(seenScope(context), listedPages, first, last, deps.clock.now());
}

/** The key the next slice starts after so that it starts at `candidate`. */
function keyBefore(keys: readonly SliceKey[], candidate: SliceKey, after: string | null): string | null {
  const index = keys.indexOf(candidate);
  return index > 0 ? keys[index - 1]!.entityId : after;
}

function countsOf(verdicts: readonly Confirmation[]): Record<Confirmation['kind'], number> {
  const counts = { gone: 0, found: 0, defer: 0, failed: 0 };
  for (const verdict of verdicts) counts[verdict.kind] += 1;
  return counts;
}

/** A candidate whose absence could not be confirmed: a dead letter of its entity, retried by id. */
async function fileUnconfirmed(
  context: StepContext,
  failure: { entityId: string; reason: string; errorClass: 'transient' | 'permanent'; attempts: number },
): Promise<void> {
  const { deps, run, message } = context;
  await fileItemDeadLetter(context, {
    sourceId: run.sourceId,
    ref: failure.entityId,
    errorClass: failure.errorClass,
    reason: `absence not confirmed (not tombstoned): ${failure.reason}`,
    attempts: failure.attempts,
    runId: run.runId,
    page: message.page,
    now: deps.clock.now(),
  });
  deps.metrics.count(METRIC.deadLetters, 1, { name: 'Kind', value: 'item' });
}
