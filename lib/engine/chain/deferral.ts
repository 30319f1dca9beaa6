import { RELIABILITY } from '../../config/constants.js';
import { METRIC } from '../../observability/metrics.js';
import type { PageMessage } from '../../queue/page-message.js';
import type { SyncRun } from '../../run/model.js';
import { partitionOf, readWindow } from '../../run/partitions.js';
import { lastProgressAt } from '../../run/silence.js';
import type { EngineDeps } from '../deps.js';
import { endRun } from '../run/finish.js';
import { tell } from '../run/story.js';
import { reservedSlot } from '../sources/rate-budget.js';
import type { StepContext, StepResult } from '../step/context.js';
import { pageRef, pageScope } from '../step/page-scope.js';
import { isTombstoneSlice } from '../work/tombstone-cursor.js';
import { deliverOrFail } from './undeliverable.js';

/**
 * Defers the step's page to `untilMs`: records the pause on the run, re-enqueues the
 * page carrying the attempts it already spent, and confirms the handoff. A wake-up that would
 * land past the run's progress budget is not scheduled: the run ends `source_unavailable` now.
 */
export async function deferPage(
  context: StepContext,
  untilMs: number,
  reason: string,
  attempts: number,
): Promise<StepResult> {
  const { deps, run, message } = context;
  const budgetEndsAt = lastProgressAt(run) + RELIABILITY.progressBudgetMs;
  if (untilMs > budgetEndsAt) {
    context.log.warn('the source asks for a wait past the progress budget', {
      until: new Date(untilMs).toISOString(),
      reason,
    });
    return failUnavailable(deps, run, message, reason);
  }
  const now = deps.clock.now();
  const chain = { runId: run.runId, partition: message.partition };
  await deps.chains.defer(chain, run.epoch, message.page, untilMs, now);
  // A wait for the rate budget carries its reserved slot, so the page keeps its place in line.
  const { budgetSlot: _spent, ...rest } = message;
  const slot = reservedSlot(context);
  const deferred = { ...rest, deferred: true, attempts, ...(slot ? { budgetSlot: slot } : {}) };
  const via = await deliverOrFail(deps, deferred, () => deps.queue.sendAt(deferred, untilMs, now));
  await deps.chains.confirmSent(chain, run.epoch, message.page, deps.clock.now());
  deps.metrics.count(METRIC.deferrals);
  await tell(deps, run, {
    type: 'deferred',
    epoch: run.epoch,
    at: now,
    detail: {
      partition: message.partition ?? null,
      page: message.page,
      until: new Date(untilMs).toISOString(),
      reason: reason.slice(0, 300),
    },
  });
  context.log.info('page deferred', {
    until: new Date(untilMs).toISOString(),
    reason,
    attempts,
    via: via.via,
  });
  return { outcome: 'deferred', until: untilMs };
}

/**
 * Ends a run that could not make progress for the progress budget: `failed` with
 * `source_unavailable`, the lock released, the checkpoint kept. The page it could not fetch is
 * filed in dead_letters with its cursor, so "retry failed" fetches it once the source is back.
 * A retry-failed run files nothing: the entries it was retrying are still open; nor does a
 * reconciliation's tombstone pass.
 */
export async function failUnavailable(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
  lastReason: string,
): Promise<StepResult> {
  const hours = RELIABILITY.progressBudgetMs / 3_600_000;
  // A tombstone slice is no source page: retry-failed could not fetch it, and the next
  // reconciliation confirms its candidates again.
  if (run.mode !== 'dlq_retry' && !isTombstoneSlice(message.cursor)) {
    const partition = partitionOf(run, message.partition);
    const window = partition ? readWindow(partition) : undefined;
    await deps.deadLetters.record({
      sourceId: run.sourceId,
      kind: 'page',
      ref: pageRef(message.cursor, window),
      errorClass: 'transient',
      reason: `source unavailable for ${hours} h: ${lastReason}`,
      attempts: Math.max(1, message.attempts ?? 0),
      runId: run.runId,
      page: message.page,
      scope: pageScope(run, undefined, window),
      now: deps.clock.now(),
    });
    deps.metrics.count(METRIC.deadLetters, 1, { name: 'Kind', value: 'page' });
  }
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: 'source_unavailable',
      message: `page ${message.page} could not be fetched for ${hours} h (last: ${lastReason}); the position is kept for retry-failed`,
    },
  });
  return { outcome: 'failed', reason: 'source_unavailable' };
}
