import { RELIABILITY } from '../../config/constants.js';
import { METRIC } from '../../observability/metrics.js';
import { chainLabel, chainsOf, nextCursor, type RunChain } from '../../run/chains.js';
import type { SyncRun } from '../../run/model.js';
import { isPartitioned, partitionOf } from '../../run/partitions.js';
import { decideResume, positionAt } from '../../run/resume-policy.js';
import { judgeSilence, lastProgressAt, type Silence } from '../../run/silence.js';
import { StoreError } from '../../store/errors.js';
import { resendExpectedPage } from '../chain/handoff.js';
import { finishPartitionedRun, startTailPass } from '../chain/partition-work.js';
import { PageUndeliverableError } from '../chain/undeliverable.js';
import type { EngineDeps } from '../deps.js';
import { CHAINS_INLINE, endInlineRun, finishSucceeded } from '../run/finish.js';
import { rearm, resumeChains } from '../run/restart.js';
import { tell } from '../run/story.js';
import { adoptedParams, failCrashLoop, restartStale, sourceNow } from './reaper-shared.js';

/** What the reaper did with one run. */
export type ReapOutcome =
  | {
      readonly kind: 'acted';
      readonly verdict: string;
      readonly action: string;
      /** A page re-sent because its send was never confirmed: the run waits in the queue since then. */
      readonly waitingSince?: number;
    }
  | { readonly kind: 'waiting'; readonly since: number };

/**
 * The reaper's judgement of one active run, by one rule for every run: each of its open chains
 * is judged ({@link judgeSilence} on the chain's heartbeat and handoff). A chain whose page waits
 * in the queue is left to it; one whose page was lost between commit and send gets it re-sent at
 * the same epoch. A chain whose worker took its page and went silent is a crash of the RUN: the
 * resume policy decides, and the run is fenced (epoch + 1, one restart counted) with every open
 * chain re-armed from its own checkpoint — or restarted from scratch, or failed. A run whose
 * chains are all done but which was never ended (its last worker died between its commit and
 * the finish) is ended here.
 */
export async function reapRun(deps: EngineDeps, run: SyncRun, now: number): Promise<ReapOutcome | undefined> {
  if (run.inlineChains) {
    await endInlineRun(deps, run);
    return { kind: 'acted', verdict: CHAINS_INLINE, action: 'fail' };
  }
  const chains = chainsOf(run);
  const open = chains.filter((c) => c.state === 'running');
  if (open.length === 0) return completeRun(deps, run, chains);
  const judged = open.map((chain) => ({ chain, silence: judgeSilence(chain, now) }));
  const lost = judged.filter((j) => j.silence.kind === 'lost').map((j) => j.chain);
  if (lost.length > 0) return decide(deps, run, lost, now);

  let resent: Extract<Silence, { kind: 'resend' }> | undefined;
  // Chains whose re-send SQS refused: their page most likely still waits in the queue.
  const unsentSince: number[] = [];
  for (const { chain, silence } of judged) {
    if (silence.kind !== 'resend') continue;
    if (positionAt(run) !== null && now - lastProgressAt(run) > RELIABILITY.checkpointFreshnessMs) {
      // The position the page would continue from is stale: start over, counted.
      const verdict = await restartStale(deps, run);
      return { kind: 'acted', verdict, action: verdict === 'restart_limit' ? 'fail' : 'restart' };
    }
    const sent = await resendOrWait(deps, run, silence, chain);
    if (sent === 'sent') resent = silence;
    if (sent === 'failed') unsentSince.push(silence.since);
  }
  // A successor handed over without a confirmed send is most likely waiting in the queue (a
  // commit's successor is never confirmed): it is sent once more and the run is still waiting.
  if (resent?.reason === 'send_unconfirmed') {
    await tellWaiting(deps, run, resent.since, true, now);
    return { kind: 'acted', verdict: resent.reason, action: 'resend', waitingSince: resent.since };
  }
  if (resent) return { kind: 'acted', verdict: resent.reason, action: 'resend' };
  const waitingSince = [
    ...judged.flatMap(({ silence }) => (silence.kind === 'waiting' ? [silence.since] : [])),
    ...unsentSince,
  ];
  if (waitingSince.length === 0) return undefined;
  const since = Math.min(...waitingSince);
  deps.logger.info('silent run is waiting in the queue, not lost', {
    runId: run.runId,
    chains: waitingSince.length,
    waitingSince: new Date(since).toISOString(),
  });
  await tellWaiting(deps, run, since, false, now);
  return { kind: 'waiting', since };
}

/**
 * Sends a chain's expected page once more. When SQS refuses the copy, the page most likely still
 * waits in the queue (its first send went through, or the handoff would say it failed): the chain
 * is waiting, and the next pass sends the copy. `raced` when another reaper or a worker moved the
 * chain first.
 */
async function resendOrWait(
  deps: EngineDeps,
  run: SyncRun,
  silence: Extract<Silence, { kind: 'resend' }>,
  chain: RunChain,
): Promise<'sent' | 'raced' | 'failed'> {
  try {
    return (await resendExpectedPage(deps, run, silence.reason, chain.partition)) ? 'sent' : 'raced';
  } catch (error) {
    if (error instanceof PageUndeliverableError || error instanceof StoreError) throw error;
    deps.logger.warn('could not send the expected page again; the next pass tries again', {
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: run.epoch,
      page: chain.nextPage,
      chain: chainLabel(chain),
      error: String(error),
    });
    return 'failed';
  }
}

/** Every chain read to its end, the run not ended: the idle open window reads its tail, or the run ends. */
async function completeRun(
  deps: EngineDeps,
  run: SyncRun,
  chains: readonly RunChain[],
): Promise<ReapOutcome> {
  const idle = chains.find((c) => c.state === 'idle');
  const partition = idle && partitionOf(run, idle.partition);
  if (partition) {
    await startTailPass(deps, run, partition, run.epoch);
    return { kind: 'acted', verdict: 'chains_done', action: 'tail' };
  }
  if (isPartitioned(run)) await finishPartitionedRun(deps, run.runId, run.epoch);
  else await finishSucceeded(deps, run, run.checkpoint?.watermark ?? null);
  return { kind: 'acted', verdict: 'chains_done', action: 'finish' };
}

/** A chain's worker died: resume every open chain, restart, or fail, as the resume policy decides. */
async function decide(
  deps: EngineDeps,
  run: SyncRun,
  lost: readonly RunChain[],
  now: number,
): Promise<ReapOutcome> {
  const current = await sourceNow(deps, run);
  if (!current) return { kind: 'acted', verdict: 'source_missing', action: 'fail' };
  const decision = decideResume({
    run,
    orderedByModifiedTime: current.stable,
    currentParamsHash: current.currentParamsHash,
    now,
  });
  deps.logger.warn('silent run found', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    chains: lost.map(chainLabel),
    verdict: decision.verdict,
  });
  if (decision.action === 'fail') {
    const first = lost[0]!;
    await failCrashLoop(deps, run, { page: first.nextPage, cursor: nextCursor(first), window: first.window });
    return { kind: 'acted', verdict: decision.verdict, action: 'fail' };
  }
  if (decision.action === 'restart') {
    // A run restarted because its source was reconfigured adopts the new configuration.
    const params = decision.verdict === 'params_changed' ? adoptedParams(run, current) : undefined;
    await rearm(deps, run, { verdict: decision.verdict, countRestart: true, ...(params ? { params } : {}) });
  } else {
    await resumeChains(deps, run);
  }
  deps.metrics.count(METRIC.runsResumed, 1, { name: 'Verdict', value: decision.verdict });
  return { kind: 'acted', verdict: decision.verdict, action: decision.action };
}

/** Tells that the run waits in the queue (once per wait: the same wait told again is a duplicate). */
function tellWaiting(deps: EngineDeps, run: SyncRun, since: number, resent: boolean, now: number) {
  return tell(deps, run, {
    type: 'waiting',
    epoch: run.epoch,
    at: now,
    detail: { since: new Date(since).toISOString(), resent },
  });
}
