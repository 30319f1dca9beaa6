import { RELIABILITY } from '../config/constants.js';
import { hasStablePosition } from '../connectors/contract.js';
import { METRIC } from '../observability/metrics.js';
import { runParamsHash } from '../run/hash.js';
import { isActive, type SyncRun } from '../run/model.js';
import { decideResume } from '../run/resume-policy.js';
import { judgeSilence, lastProgressAt } from '../run/silence.js';
import { StoreError } from '../store/errors.js';
import type { EngineDeps } from './deps.js';
import { endRun, publishOutcome } from './finish.js';
import { resendExpectedPage } from './handoff.js';
import { pageScope } from './page-scope.js';
import { rearm } from './restart.js';

/** What one reaper pass did, run by run. */
export interface ReapReport {
  readonly examined: number;
  readonly actions: { readonly runId: string; readonly verdict: string; readonly action: string }[];
  /** Silent runs whose expected page waits in the queue: reported, never fenced, restarted or counted. */
  readonly waiting: { readonly runId: string; readonly since: number }[];
}

type ReapOutcome =
  | { readonly kind: 'acted'; readonly verdict: string; readonly action: string }
  | { readonly kind: 'waiting'; readonly since: number };

/**
 * One reaper pass (DESIGN §1, every minute): finds active runs whose heartbeat has been silent
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
      // The checkpoint the page would continue from is stale (DESIGN §5): start over, but
      // nothing crashed, so no restart is counted.
      await rearm(deps, run, { verdict: 'checkpoint_stale', from: 'scratch', countRestart: false });
      return { kind: 'acted', verdict: 'checkpoint_stale', action: 'restart' };
    }
    const resent = await resendExpectedPage(deps, run, silence.reason);
    return resent ? { kind: 'acted', verdict: silence.reason, action: 'resend' } : undefined;
  }
  const source = await deps.sources.get(run.sourceId);
  if (!source) {
    await endRun(deps, run, {
      epoch: run.epoch,
      state: 'failed',
      failure: { reason: 'source_missing', message: `source ${run.sourceId} no longer exists` },
    });
    return { kind: 'acted', verdict: 'source_missing', action: 'fail' };
  }
  const connector = deps.connectors.get(source.connector);
  const config = connector.configSchema.safeParse(source.config);
  const currentParamsHash = config.success
    ? runParamsHash({
        mode: run.mode,
        connector: source.connector,
        config: config.data as Record<string, unknown>,
        scope: run.params.scope,
      })
    : 'invalid-config';
  const decision = decideResume({
    run,
    orderedByModifiedTime: config.success ? hasStablePosition(connector.manifestFor(config.data)) : false,
    currentParamsHash,
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
  await rearm(deps, run, {
    verdict: decision.verdict,
    from: decision.action === 'resume' ? 'checkpoint' : 'scratch',
    countRestart: true,
    // A run restarted because its source was reconfigured adopts the new configuration.
    ...(decision.verdict === 'params_changed' && config.success
      ? {
          params: {
            params: {
              ...run.params,
              connector: source.connector,
              config: config.data as Record<string, unknown>,
              configHash: source.configHash,
            },
            paramsHash: currentParamsHash,
          },
        }
      : {}),
  });
  deps.metrics.count(METRIC.runsResumed, 1, { name: 'Verdict', value: decision.verdict });
  return { kind: 'acted', verdict: decision.verdict, action: decision.action };
}

/** Ends a crash loop: the page that keeps killing workers goes to dead_letters, the run fails with `restart_limit`. */
async function failCrashLoop(deps: EngineDeps, run: SyncRun): Promise<void> {
  const now = deps.clock.now();
  const cursor = run.nextPage > 1 ? (run.checkpoint?.cursor ?? '') : '';
  // A retry-failed run's cursor walks dead_letters, not the source: filing it as a source page
  // would make the next retry fetch a listing cursor from the source. Its entries stay open.
  if (run.mode !== 'dlq_retry')
    await deps.deadLetters.record({
      sourceId: run.sourceId,
      kind: 'page',
      ref: cursor,
      errorClass: 'permanent',
      reason: `page ${run.nextPage} stopped the worker ${run.restarts + 1} times (crash loop)`,
      attempts: run.restarts + 1,
      runId: run.runId,
      page: run.nextPage,
      scope: pageScope(run),
      now,
    });
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: 'restart_limit',
      message: `the run was restarted ${run.restarts} times and its worker went silent again on page ${run.nextPage}`,
    },
    resume: { reason: 'restart_limit', from: 'none', at: now },
  });
}
