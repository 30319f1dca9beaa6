import { METRIC } from '../../observability/metrics.js';
import { judgeCompleteness } from '../../run/completeness.js';
import { RETRY_FIXED_NOTHING, type ResumeRecord, type RunFailure, type SyncRun } from '../../run/model.js';
import { heldWatermark, partitionsOf } from '../../run/partitions.js';
import type { SourceWatermark } from '../../store/sources.js';
import type { EngineDeps } from '../deps.js';
import { tellEnded } from './story.js';
import { finalWatermark } from './watermark.js';

/** How the engine ends a run. */
export interface Ending {
  readonly epoch: number | null;
  readonly state: 'succeeded' | 'failed';
  readonly failure?: RunFailure;
  readonly resume?: ResumeRecord;
  /** New source watermark with its stream; committed only on success. */
  readonly watermark?: SourceWatermark | null;
}

/**
 * Ends a run: state, lock release, (on success) watermark and the outbox mark in one
 * transaction, then metrics and the outcome event. The event is published at least once: the
 * mark leaves the run only after a successful publish, and the reaper re-publishes for a run
 * whose worker died (or whose publish failed) in between.
 */
export async function endRun(
  deps: EngineDeps,
  run: Pick<SyncRun, 'runId' | 'sourceId' | 'mode'>,
  ending: Ending,
): Promise<SyncRun> {
  // The source's count as the run last heard it, read before the ending settles the run's total.
  const sourceCount = checksCompleteness(ending.state, run)
    ? (await deps.runs.require(run.runId)).progress.total
    : null;
  await deps.lifecycle.finish({
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: ending.epoch,
    state: ending.state,
    ...(ending.failure ? { failure: ending.failure } : {}),
    ...(ending.resume ? { resume: ending.resume } : {}),
    ...(ending.watermark ? { watermark: ending.watermark } : {}),
    now: deps.clock.now(),
  });
  const ended = await checkCompleteness(deps, await deps.runs.require(run.runId), sourceCount);
  deps.metrics.count(ended.state === 'succeeded' ? METRIC.runsSucceeded : METRIC.runsFailed);
  if (ended.startedAt !== null && ended.finishedAt !== null) {
    deps.metrics.seconds(METRIC.runDurationSeconds, (ended.finishedAt - ended.startedAt) / 1_000);
  }
  deps.logger.info('run ended', {
    runId: ended.runId,
    sourceId: ended.sourceId,
    state: ended.state,
    processed: ended.progress.processed,
    errorCount: ended.errorCount,
    failure: ended.failure,
  });
  await publishOutcome(deps, ended);
  return ended;
}

/** Modes whose run reads the whole stream, so the store's count can check it. */
const CHECKED_MODES: ReadonlySet<SyncRun['mode']> = new Set(['full', 'reconciliation']);

function checksCompleteness(state: SyncRun['state'], run: Pick<SyncRun, 'mode'>): boolean {
  return state === 'succeeded' && CHECKED_MODES.has(run.mode);
}

/**
 * Takes a succeeded full or reconciliation run's completeness check (lib/run/completeness.ts) and
 * writes it into the run, before its outcome event carries it. The check never changes how the
 * run ended: a count that fails is logged and the run goes without one.
 */
async function checkCompleteness(
  deps: EngineDeps,
  ended: SyncRun,
  sourceCount: number | null,
): Promise<SyncRun> {
  if (!checksCompleteness(ended.state, ended) || ended.completeness) return ended;
  try {
    const completeness = judgeCompleteness(
      {
        sourceCount,
        processed: ended.progress.processed,
        failed: ended.errorCount,
        stored: await deps.itemCounts.live(ended.sourceId),
        held: heldWatermark(partitionsOf(ended)),
      },
      deps.clock.now(),
    );
    if (!(await deps.runs.recordCompleteness(ended.runId, completeness))) {
      return deps.runs.require(ended.runId);
    }
    if (completeness.verdict === 'short') {
      deps.metrics.count(METRIC.runsShort);
      deps.logger.warn('run ended short of what the source holds', {
        runId: ended.runId,
        sourceId: ended.sourceId,
        ...completeness,
      });
    }
    return { ...ended, completeness };
  } catch (error) {
    deps.logger.warn('could not check the run for completeness', {
      runId: ended.runId,
      error: String(error),
    });
    return ended;
  }
}

/**
 * Publishes an ended run's outcome event (if its outcome deserves one) and clears its outbox
 * mark. A failed publish is logged and the mark stays, so the reaper tries again.
 */
export async function publishOutcome(deps: EngineDeps, ended: SyncRun): Promise<boolean> {
  // Told here, before the publish, so the reaper's second try for a worker that died tells it too.
  await tellEnded(deps, ended);
  try {
    await deps.events.publishOutcome(ended);
  } catch (error) {
    deps.logger.error('could not publish the run outcome event; the reaper will retry', {
      runId: ended.runId,
      error: String(error),
    });
    return false;
  }
  await deps.runs.clearOutbox(ended.runId);
  return true;
}

/**
 * Ends a run that reached `MAX_PAGES_PER_RUN`: the bound that replaces Lambda's recursive-loop
 * guard for a worker that re-enqueues itself.
 */
export async function failOverBudget(
  deps: EngineDeps,
  run: SyncRun,
): Promise<{ outcome: 'failed'; reason: string }> {
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: 'page_budget_exceeded',
      message: `the run reached its budget of ${deps.limits.maxPagesPerRun} pages (MAX_PAGES_PER_RUN)`,
    },
  });
  return { outcome: 'failed', reason: 'page_budget_exceeded' };
}
/**
 * Whether a dead-letter retry run that read every entry it was to retry fixed nothing: each one it
 * retried failed again (none stored, none found gone). Such a run did not succeed, though every
 * page of it committed: it ends failed, so it is never its source's last successful run.
 */
export function retryFixedNothing(run: Pick<SyncRun, 'mode' | 'progress' | 'errorCount'>): boolean {
  return (
    run.mode === 'dlq_retry' &&
    run.progress.processed === 0 &&
    (run.progress.gone ?? 0) === 0 &&
    run.errorCount > 0
  );
}

/**
 * Ends a run whose stream is complete: runs over a keyed stream commit their watermark with the
 * success. A dead-letter retry that fixed nothing ends failed (`retry_fixed_nothing`), judged on
 * the run as its last commit left it: every chain is done, so no count can move any more.
 */
export async function finishSucceeded(
  deps: EngineDeps,
  run: SyncRun,
  watermark: string | null,
): Promise<void> {
  if (run.mode === 'dlq_retry') {
    const counted = await deps.runs.require(run.runId);
    if (retryFixedNothing(counted)) {
      await endRun(deps, run, {
        epoch: run.epoch,
        state: 'failed',
        failure: {
          reason: RETRY_FIXED_NOTHING,
          message: `all ${counted.errorCount} retried dead letters failed again: fix them at the source, then retry, or discard them`,
        },
      });
      return;
    }
  }
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'succeeded',
    watermark: finalWatermark(deps, run, watermark),
  });
}

/** The failure a run stored by an earlier version, its chains inside the run item, ends with. */
export const CHAINS_INLINE = 'chains_inline';

/**
 * Ends a run stored by an earlier version with its page chains inside the run item: no worker of
 * this version continues it, so it ends failed, its lock released, saying why (docs/design.md).
 */
export async function endInlineRun(deps: EngineDeps, run: SyncRun): Promise<void> {
  await endRun(deps, run, {
    epoch: null,
    state: 'failed',
    failure: {
      reason: CHAINS_INLINE,
      message:
        'the run was stored by an earlier version, its page chains inside the run item; start it again',
    },
  });
}
