import { METRIC } from '../observability/metrics.js';
import type { Partition, SyncRun } from '../run/model.js';
import { lowerCeiling, partitionedWatermark, partitionsOf } from '../run/partitions.js';
import { DuplicatePageError } from '../store/errors.js';
import type { EngineDeps } from './deps.js';
import { finishSucceeded } from './finish.js';
import { sendPage } from './handoff.js';
import type { RunParams } from './start-run.js';
import type { StepContext, StepResult } from './step.js';
import { startingWatermark } from './watermark.js';

/**
 * Commits one complete page of a partition (the partition's checkpoint and the run's counters in
 * one conditional write) and continues the partition's chain. The partition's last page marks it
 * done; the commit that leaves no partition open ends the run.
 */
export async function commitPartitionPage(
  context: StepContext,
  partition: Partition,
  page: {
    cursor: string | null;
    watermark: string | null;
    processed: number;
    errors: number;
    ceiling?: string | null;
  },
): Promise<StepResult> {
  const { deps, run, message } = context;
  let open: number | null;
  try {
    ({ openPartitions: open } = await deps.partitions.commit({
      runId: run.runId,
      epoch: run.epoch,
      partition: partition.index,
      page: message.page,
      checkpoint: { cursor: page.cursor, watermark: page.watermark },
      ceiling: lowerCeiling(partition.ceiling, page.ceiling),
      processed: page.processed,
      errors: page.errors,
      now: deps.clock.now(),
    }));
  } catch (error) {
    if (error instanceof DuplicatePageError) {
      context.log.info('partition page already committed by another delivery; dropping');
      deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: 'duplicate_page' });
      return { outcome: 'dropped', reason: 'duplicate_page' };
    }
    throw error;
  }
  deps.metrics.count(METRIC.pagesCommitted);
  await context.checkpointHook('afterCommit');
  if (page.cursor === null) {
    context.log.info('partition read its window to the end', { openPartitions: open });
    if (open !== 0) return { outcome: 'committed', next: 'partition_done' };
    await finishPartitionedRun(deps, run.runId, run.epoch);
    return { outcome: 'committed', next: 'finished' };
  }
  await sendPage(deps, {
    v: 1,
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    page: message.page + 1,
    cursor: page.cursor,
    partition: partition.index,
  });
  return { outcome: 'committed', next: 'enqueued' };
}

/**
 * Ends a partitioned run whose partitions all read their windows: `succeeded`, with the watermark
 * every window supports (see {@link partitionedWatermark}), at the epoch of the worker (or
 * reaper) that saw the last partition done.
 */
export async function finishPartitionedRun(deps: EngineDeps, runId: string, epoch: number): Promise<SyncRun> {
  const run = await deps.runs.require(runId);
  const watermark = partitionedWatermark(
    partitionsOf(run),
    startingWatermark(run.params as unknown as RunParams),
  );
  await finishSucceeded(deps, { ...run, epoch }, watermark);
  return run;
}
