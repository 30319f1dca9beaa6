import { RELIABILITY } from '../config/constants.js';
import { METRIC } from '../observability/metrics.js';
import type { Partition, SyncRun } from '../run/model.js';
import { partitionSilenceInput, partitionsOf, readWindow } from '../run/partitions.js';
import { decidePartitionedResume } from '../run/resume-policy.js';
import { judgeSilence, lastProgressAt, type Silence } from '../run/silence.js';
import type { EngineDeps } from './deps.js';
import { pageMessage, resendExpectedPage, sendPage } from './handoff.js';
import { finishPartitionedRun, startTailPass } from './partition-work.js';
import type { ReapOutcome } from './reaper.js';
import { adoptedParams, failCrashLoop, restartStale, sourceNow } from './reaper-shared.js';
import { rearm } from './restart.js';

/**
 * The reaper's pass over one partitioned run. Each unfinished partition is judged like a run
 * ({@link judgeSilence} on its own heartbeat and handoff): waiting partitions are left to the
 * queue, a partition whose page was lost between commit and send gets it re-sent at the same
 * epoch. A partition whose worker took its page and went silent is a crash of the RUN: the run
 * is fenced (epoch + 1, one restart counted) and every unfinished partition is re-armed from its
 * own checkpoint — or the run restarts from scratch and plans again where the policy says so.
 * A run whose partitions are all done but which was never ended (its last worker died between
 * the commit and the finish) is ended here.
 */
export async function reapPartitioned(
  deps: EngineDeps,
  run: SyncRun,
  now: number,
): Promise<ReapOutcome | undefined> {
  const open = partitionsOf(run).filter((p) => p.state === 'running');
  if (open.length === 0) {
    // The last window's worker died between its commit and what follows it: do that now.
    const idle = partitionsOf(run).find((p) => p.state === 'idle');
    if (idle) {
      await startTailPass(deps, run, idle, run.epoch);
      return { kind: 'acted', verdict: 'partitions_done', action: 'tail' };
    }
    await finishPartitionedRun(deps, run.runId, run.epoch);
    return { kind: 'acted', verdict: 'partitions_done', action: 'finish' };
  }
  const judged = open.map((partition) => ({
    partition,
    silence: judgeSilence(partitionSilenceInput(partition), now),
  }));
  const lost = judged.filter((j) => j.silence.kind === 'lost').map((j) => j.partition);
  if (lost.length > 0) return fenceRun(deps, run, open, lost, now);

  let resent: Extract<Silence, { kind: 'resend' }>['reason'] | undefined;
  for (const { partition, silence } of judged) {
    if (silence.kind !== 'resend') continue;
    if (now - lastProgressAt(run) > RELIABILITY.checkpointFreshnessMs) {
      // The positions the pages would continue from are stale: start over, counted.
      const verdict = await restartStale(deps, run);
      return { kind: 'acted', verdict, action: verdict === 'restart_limit' ? 'fail' : 'restart' };
    }
    if (await resendExpectedPage(deps, run, silence.reason, partition.index)) resent = silence.reason;
  }
  if (resent) return { kind: 'acted', verdict: resent, action: 'resend' };
  const waiting = judged
    .map((j) => j.silence)
    .filter((s): s is Extract<Silence, { kind: 'waiting' }> => s.kind === 'waiting');
  if (waiting.length === 0) return undefined;
  const since = Math.min(...waiting.map((w) => w.since));
  deps.logger.info('silent partitions are waiting in the queue, not lost', {
    runId: run.runId,
    partitions: waiting.length,
    waitingSince: new Date(since).toISOString(),
  });
  return { kind: 'waiting', since };
}

/** A partition's worker died: fence the run, then resume every unfinished partition, restart, or fail. */
async function fenceRun(
  deps: EngineDeps,
  run: SyncRun,
  open: readonly Partition[],
  lost: readonly Partition[],
  now: number,
): Promise<ReapOutcome | undefined> {
  const current = await sourceNow(deps, run);
  if (!current) return { kind: 'acted', verdict: 'source_missing', action: 'fail' };
  const decision = decidePartitionedResume({
    run,
    currentParamsHash: current.currentParamsHash,
    lastProgressAt: lastProgressAt(run),
    now,
  });
  deps.logger.warn('silent partition found', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    partitions: lost.map((p) => p.index),
    verdict: decision.verdict,
  });
  if (decision.action === 'fail') {
    const first = lost[0]!;
    await failCrashLoop(deps, run, {
      page: first.nextPage,
      cursor: first.nextPage > 1 ? (first.checkpoint?.cursor ?? null) : null,
      window: readWindow(first),
    });
    return { kind: 'acted', verdict: decision.verdict, action: 'fail' };
  }
  if (decision.action === 'restart') {
    const params = decision.verdict === 'params_changed' ? adoptedParams(run, current) : undefined;
    await rearm(deps, run, {
      verdict: decision.verdict,
      from: 'scratch',
      countRestart: true,
      ...(params ? { params } : {}),
    });
  } else {
    await resumePartitions(deps, run, open);
  }
  deps.metrics.count(METRIC.runsResumed, 1, { name: 'Verdict', value: decision.verdict });
  return { kind: 'acted', verdict: decision.verdict, action: decision.action };
}

/**
 * Fences the run and hands every unfinished partition's expected page to the queue at the new
 * epoch, each continuing from its own checkpoint (page 1 of its window when it committed none).
 */
export async function resumePartitions(
  deps: EngineDeps,
  run: SyncRun,
  open: readonly Partition[],
): Promise<number> {
  const now = deps.clock.now();
  const epoch = await deps.partitions.fenceResume({
    runId: run.runId,
    epoch: run.epoch,
    resume: { reason: 'resumed', from: 'checkpoint', at: now },
    countRestart: true,
    partitions: open.map((p) => ({ index: p.index, page: p.nextPage })),
    now,
  });
  for (const partition of open) {
    const cursor = partition.nextPage > 1 ? (partition.checkpoint?.cursor ?? null) : null;
    await sendPage(deps, pageMessage(run, partition.nextPage, cursor, { partition: partition.index, epoch }));
  }
  deps.logger.info('partitioned run re-armed', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch,
    partitions: open.map((p) => ({ index: p.index, page: p.nextPage })),
  });
  return epoch;
}
