import { RELIABILITY } from '../config/constants.js';
import { METRIC } from '../observability/metrics.js';
import { isActive } from '../run/model.js';
import { isPartitioned } from '../run/partitions.js';
import { decideResume } from '../run/resume-policy.js';
import { judgeSilence, lastProgressAt } from '../run/silence.js';
import { StoreError } from '../store/errors.js';
import type { EngineDeps } from './deps.js';
import { publishOutcome } from './finish.js';
import { resendExpectedPage } from './handoff.js';
import { reapPartitioned } from './partition-reaper.js';
import { adoptedParams, failCrashLoop, restartStale, sourceNow } from './reaper-shared.js';
import { rearm } from './restart.js';
import { PageUndeliverableError, UNDELIVERABLE } from './undeliverable.js';

/** What one reaper pass did, run by run. */
export interface ReapReport {
  readonly examined: number;
  readonly actions: { readonly runId: string; readonly verdict: string; readonly action: string }[];
  /** Silent runs whose expected page waits in the queue: reported, never fenced, restarted or counted. */
  readonly waiting: { readonly runId: string; readonly since: number }[];
}

export type ReapOutcome =
  | { readonly kind: 'acted'; readonly verdict: string; readonly action: string }
  | { readonly kind: 'waiting'; readonly since: number };

/**
 * One reaper pass (every minute): finds active runs whose heartbeat has been silent
 * for longer than the threshold and judges the silence ({@link judgeSilence}): a run whose
 * expected page waits in the queue is reported, not touched; a page whose send was never
 * confirmed is sent again at the same epoch; only a run whose worker took its page and went
 * silent is decided by the pure resume policy, fenced and re-enqueued — or failed as a crash
 * loop. The fence is conditional on the epoch read, so two reapers at once cannot both act.
 */
export async function reap(deps: EngineDeps): Promise<ReapReport> {
  const now = deps.clock.now();
  const candidates = await deps.runs.listSilent(now - RELIABILITY.silenceThresholdMs);
  const actions: ReapReport['actions'] = [];
  const waiting: ReapReport['waiting'] = [];
  for (const candidate of candidates) {
    try {
      const outcome = await reapOne(deps, candidate.runId, now);
      if (outcome?.kind === 'acted')
        actions.push({ runId: candidate.runId, verdict: outcome.verdict, action: outcome.action });
      if (outcome?.kind === 'waiting') waiting.push({ runId: candidate.runId, since: outcome.since });
    } catch (error) {
      if (error instanceof PageUndeliverableError) {
        // The page it would send again can never be delivered: the run was ended failed.
        actions.push({ runId: candidate.runId, verdict: UNDELIVERABLE, action: 'fail' });
        continue;
      }
      if (error instanceof StoreError) {
        // Another reaper or the worker itself got there first: nothing to do.
        deps.logger.info('reaper lost a race; skipping', { runId: candidate.runId, reason: error.name });
        continue;
      }
      deps.logger.error('reaper could not handle a run', { runId: candidate.runId, error: String(error) });
    }
  }
  reportWaiting(deps, waiting, now);
  return { examined: candidates.length, actions, waiting };
}

/** The backlog signal: how many runs wait on the queue and the longest wait, every pass (0 included). */
function reportWaiting(deps: EngineDeps, waiting: ReapReport['waiting'], now: number): void {
  const oldest = waiting.reduce((min, w) => Math.min(min, w.since), now);
  deps.metrics.count(METRIC.runsWaiting, waiting.length);
  deps.metrics.seconds(METRIC.oldestWaitSeconds, Math.max(0, now - oldest) / 1_000);
  if (waiting.length > 0) {
    deps.logger.warn('runs waiting in the page queue', {
      count: waiting.length,
      oldestWaitSeconds: Math.round((now - oldest) / 1_000),
      runIds: waiting.slice(0, 20).map((w) => w.runId),
    });
  }
}

async function reapOne(deps: EngineDeps, runId: string, now: number): Promise<ReapOutcome | undefined> {
  // The index is eventually consistent: re-read and re-check before acting.
  const run = await deps.runs.get(runId);
  if (!run) return undefined;
  if (!isActive(run.state)) {
    // An ended run still in the outbox: its worker died (or its publish failed) before the
    // outcome event went out. Publish it now — at least once, possibly twice.
    if (run.outboxAt === null) return undefined;
    const published = await publishOutcome(deps, run);
    return published ? { kind: 'acted', verdict: 'outbox', action: 'publish' } : undefined;
  }
  if (isPartitioned(run)) return reapPartitioned(deps, run, now);
  const silence = judgeSilence(run, now);
  if (silence.kind === 'alive' || silence.kind === 'deferred') return undefined;
  if (silence.kind === 'waiting') {
    deps.logger.info('silent run is waiting in the queue, not lost', {
      runId,
      page: run.nextPage,
      waitingSince: new Date(silence.since).toISOString(),
    });
    return { kind: 'waiting', since: silence.since };
  }
  if (silence.kind === 'resend') {
    if (run.nextPage > 1 && now - lastProgressAt(run) > RELIABILITY.checkpointFreshnessMs) {
      // The checkpoint the page would continue from is stale: start over, counted.
      const verdict = await restartStale(deps, run);
      return { kind: 'acted', verdict, action: verdict === 'restart_limit' ? 'fail' : 'restart' };
    }
    const resent = await resendExpectedPage(deps, run, silence.reason);
    return resent ? { kind: 'acted', verdict: silence.reason, action: 'resend' } : undefined;
  }
  const current = await sourceNow(deps, run);
  if (!current) return { kind: 'acted', verdict: 'source_missing', action: 'fail' };
  const decision = decideResume({
    run,
    orderedByModifiedTime: current.stable,
    currentParamsHash: current.currentParamsHash,
    now,
  });
  deps.logger.warn('silent run found', {
    runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    verdict: decision.verdict,
  });
  if (decision.action === 'fail') {
    await failCrashLoop(deps, run);
    return { kind: 'acted', verdict: decision.verdict, action: 'fail' };
  }
  // A run restarted because its source was reconfigured adopts the new configuration.
  const params = decision.verdict === 'params_changed' ? adoptedParams(run, current) : undefined;
  await rearm(deps, run, {
    verdict: decision.verdict,
    from: decision.action === 'resume' ? 'checkpoint' : 'scratch',
    countRestart: true,
    ...(params ? { params } : {}),
  });
  deps.metrics.count(METRIC.runsResumed, 1, { name: 'Verdict', value: decision.verdict });
  return { kind: 'acted', verdict: decision.verdict, action: decision.action };
}
