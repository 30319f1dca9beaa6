import { METRIC } from '../../observability/metrics.js';
import type { Checkpoint, Partition, SyncRun } from '../../run/model.js';
import { runParams } from '../../run/params.js';
import { advanceLatest, lowerCeiling, partitionedWatermark, partitionsOf } from '../../run/partitions.js';
import type { ChainCommit, ChainEnding } from '../../store/chains.js';
import { DuplicatePageError, RunStateError } from '../../store/errors.js';
import type { EngineDeps } from '../deps.js';
import { finishSucceeded } from '../run/finish.js';
import { tell, tellPages } from '../run/story.js';
import { startingWatermark } from '../run/watermark.js';
import { droppedAsDuplicate, type StepContext, type StepResult } from '../step/context.js';
import { handOver, pageMessage, sendPage } from './handoff.js';

/**
 * Commits one complete page of a partition (the partition's checkpoint and the run's counters in
 * one conditional write) and continues the partition's chain. A bounded window's last page marks
 * it done. The open last window's end depends on the others: if none is open it is done (its
 * stream read everything up to now, as a one-stream run's does); if one is, it goes idle and
 * reads once more from where it stopped — a tail pass — when the others are done, so entities
 * edited during the run, which move to the end of the stream, are read by this run. The commit
 * that leaves no partition open ends the run.
 */
export async function commitPartitionPage(
  context: StepContext,
  partition: Partition,
  page: {
    cursor: string | null;
    watermark: string | null;
    processed: number;
    errors: number;
    ahead?: number;
    ceiling?: string | null;
    read?: readonly { id: string; version: string }[];
    /** What the chain's guards keep on its checkpoint (`chain-guards.ts`). */
    guards?: Pick<Checkpoint, 'cycle' | 'failedInRow'>;
  },
): Promise<StepResult> {
  const { deps, run, message } = context;
  const commit: ChainCommit = {
    ref: { runId: run.runId, partition: partition.index },
    epoch: run.epoch,
    page: message.page,
    checkpoint: { cursor: page.cursor, watermark: page.watermark, ...page.guards },
    keyset: {
      ceiling: lowerCeiling(partition.ceiling, page.ceiling),
      ...advanceLatest(partition, page.read ?? []),
    },
    processed: page.processed,
    errors: page.errors,
    ...(page.ahead ? { ahead: page.ahead } : {}),
    now: deps.clock.now(),
  };
  let ending: ChainEnding | undefined;
  try {
    ending = await commitWithEnding(deps, commit, partition, run);
  } catch (error) {
    if (error instanceof DuplicatePageError)
      return droppedAsDuplicate(context, 'partition page already committed by another delivery; dropping');
    throw error;
  }
  deps.metrics.count(METRIC.pagesCommitted);
  await tellPages(deps, run, {
    partition: partition.index,
    page: message.page,
    processed: partition.processed + page.processed,
  });
  if (ending)
    await tell(deps, run, {
      type: 'partition_ended',
      epoch: run.epoch,
      at: commit.now,
      detail: {
        partition: partition.index,
        pages: partition.pages + 1,
        state: ending === 'idle' ? 'idle' : 'done',
      },
    });
  await context.checkpointHook('afterCommit');
  if (page.cursor !== null) {
    await handOver(deps, pageMessage(run, message.page + 1, page.cursor, { partition: partition.index }));
    return { outcome: 'committed', next: 'enqueued' };
  }
  // Read after the commit: the partitions that ended meanwhile decide what follows this one.
  const after = await deps.runs.require(run.runId);
  context.log.info('partition read its window to the end', {
    state: after.partitions?.[String(partition.index)]?.state,
    openPartitions: after.openPartitions,
  });
  // Exactly one commit takes the open count to 0: the open window's `last_open`; it ends the run.
  if (after.openPartitions === 0 && ending !== 'last_open')
    return { outcome: 'committed', next: 'partition_done' };
  return continueAfterPartition(deps, after, run.epoch);
}

/**
 * The commit of a partition page, with the ending its window allows: the open window's last page
 * is `last_open` while no other partition is open, `idle` while one is. The two are conditioned on
 * the run's open count, so a window finishing at the same moment cannot leave the choice wrong;
 * a refusal on the count means the other case holds now, and the commit is tried that way.
 */
async function commitWithEnding(
  deps: EngineDeps,
  commit: ChainCommit,
  partition: Partition,
  run: SyncRun,
): Promise<ChainEnding | undefined> {
  if (commit.checkpoint.cursor !== null || partition.window.until !== null) {
    await deps.chains.commit(commit);
    return commit.checkpoint.cursor === null ? 'done' : undefined;
  }
  // A first guess from the run as the step read it; the condition decides.
  const othersOpen = partitionsOf(run).some((p) => p.index !== partition.index && p.state !== 'done');
  let ending: ChainEnding = othersOpen ? 'idle' : 'last_open';
  for (let attempt = 0; ; attempt++) {
    try {
      await deps.chains.commit({ ...commit, ending });
      return ending;
    } catch (error) {
      // Refused on the open count alone (the run and the page still match): the other ending holds.
      if (!(error instanceof RunStateError) || attempt >= 3) throw error;
      ending = ending === 'idle' ? 'last_open' : 'idle';
    }
  }
}

/**
 * After a partition's last page: ends the run when no partition is open, starts the tail pass of
 * the idle open window when it is the only one left, and otherwise lets the others run.
 */
export async function continueAfterPartition(
  deps: EngineDeps,
  run: SyncRun,
  epoch: number,
): Promise<StepResult> {
  if (run.openPartitions === 0) {
    await finishPartitionedRun(deps, run.runId, epoch);
    return { outcome: 'committed', next: 'finished' };
  }
  const open = partitionsOf(run).filter((p) => p.state !== 'done');
  const idle = open[0];
  if (open.length === 1 && idle?.state === 'idle') {
    await startTailPass(deps, run, idle, epoch);
    return { outcome: 'committed', next: 'enqueued' };
  }
  return { outcome: 'committed', next: 'partition_done' };
}

/** Arms the idle open window's tail pass (from the latest version it read) and sends its page. */
export async function startTailPass(
  deps: EngineDeps,
  run: SyncRun,
  partition: Partition,
  epoch: number,
): Promise<boolean> {
  const from = partition.latest ?? partition.tailFrom ?? partition.window.from;
  const armed = await deps.chains.armTail(
    { runId: run.runId, partition: partition.index },
    epoch,
    from,
    partition.nextPage,
    deps.clock.now(),
  );
  if (!armed) return false;
  deps.logger.info('open window reads its tail: every other window is done', {
    runId: run.runId,
    partition: partition.index,
    from,
    page: partition.nextPage,
  });
  await sendPage(deps, pageMessage(run, partition.nextPage, null, { partition: partition.index, epoch }));
  return true;
}

/**
 * Ends a partitioned run whose partitions all read their windows: `succeeded`, with the watermark
 * every window supports (see {@link partitionedWatermark}), at the epoch of the worker (or
 * reaper) that saw the last partition done.
 */
export async function finishPartitionedRun(deps: EngineDeps, runId: string, epoch: number): Promise<SyncRun> {
  const run = await deps.runs.require(runId);
  const watermark = partitionedWatermark(partitionsOf(run), startingWatermark(runParams(run)));
  await finishSucceeded(deps, { ...run, epoch }, watermark);
  return run;
}
