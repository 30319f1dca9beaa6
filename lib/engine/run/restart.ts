import { chainsOf, nextCursor } from '../../run/chains.js';
import type { ResumeVerdict, SyncRun } from '../../run/model.js';
import { partitionCount } from '../../run/partitions.js';
import { pageMessage, sendPage } from '../chain/handoff.js';
import type { EngineDeps } from '../deps.js';
import { tell } from './story.js';

/**
 * Restarts a run from scratch under a new epoch and enqueues its page 1 (a partitioned run forgets
 * its partitions and plans again). The fence is conditional on the epoch read, so two deciders
 * racing cannot both enqueue.
 */
export async function rearm(
  deps: EngineDeps,
  run: SyncRun,
  decision: {
    verdict: ResumeVerdict;
    countRestart: boolean;
    /** Parameters the restarted run adopts (the source was reconfigured). */
    params?: { params: Record<string, unknown>; paramsHash: string };
  },
): Promise<number> {
  const now = deps.clock.now();
  const epoch = await deps.runs.fence({
    runId: run.runId,
    epoch: run.epoch,
    partitions: partitionCount(run),
    resume: { reason: decision.verdict, from: 'scratch', at: now },
    reset: true,
    rearm: [{ page: 1 }],
    countRestart: decision.countRestart,
    ...(decision.params ? { params: decision.params } : {}),
    now,
  });
  await tell(deps, run, {
    type: 'resumed',
    epoch,
    at: now,
    detail: { verdict: decision.verdict, from: 'scratch', previousEpoch: run.epoch },
  });
  await sendPage(deps, pageMessage(run, 1, null, { epoch }));
  deps.logger.info('run re-armed', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch,
    verdict: decision.verdict,
    from: 'scratch',
  });
  return epoch;
}

/**
 * Fences the run and hands every open chain's expected page to the queue at the new epoch, each
 * continuing from its own checkpoint (page 1 of its window when it committed none). An idle open
 * window moves to the new epoch too, still waiting for its tail pass.
 */
export async function resumeChains(deps: EngineDeps, run: SyncRun): Promise<number> {
  const now = deps.clock.now();
  const chains = chainsOf(run).filter((c) => c.state !== 'done');
  const epoch = await deps.runs.fence({
    runId: run.runId,
    epoch: run.epoch,
    partitions: partitionCount(run),
    resume: { reason: 'resumed', from: 'checkpoint', at: now },
    reset: false,
    rearm: chains.map((c) => ({ partition: c.partition, page: c.state === 'running' ? c.nextPage : null })),
    countRestart: true,
    now,
  });
  await tell(deps, run, {
    type: 'resumed',
    epoch,
    at: now,
    detail: { verdict: 'resumed', from: 'checkpoint', previousEpoch: run.epoch },
  });
  for (const chain of chains.filter((c) => c.state === 'running')) {
    await sendPage(
      deps,
      pageMessage(run, chain.nextPage, nextCursor(chain), { partition: chain.partition, epoch }),
    );
  }
  deps.logger.info('run re-armed', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch,
    verdict: 'resumed',
    from: 'checkpoint',
    chains: chains.map((c) => ({ partition: c.partition, page: c.nextPage })),
  });
  return epoch;
}
