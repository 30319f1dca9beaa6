import { RELIABILITY } from '../config/constants.js';
import { METRIC } from '../observability/metrics.js';
import { runParamsHash } from '../run/hash.js';
import { isActive, type SyncRun } from '../run/model.js';
import { decideResume } from '../run/resume-policy.js';
import { StoreError } from '../store/errors.js';
import type { EngineDeps } from './deps.js';
import { endRun } from './finish.js';
import { rearm } from './restart.js';

/** What one reaper pass did, run by run. */
export interface ReapReport {
  readonly examined: number;
  readonly actions: { readonly runId: string; readonly verdict: string; readonly action: string }[];
}

/**
 * One reaper pass (DESIGN §1, every minute): finds active runs whose heartbeat has been silent
 * for longer than the threshold (and whose planned pause, if any, is over), decides with the
 * pure resume policy, fences and re-enqueues — or fails a crash loop. The fence is conditional
 * on the epoch read, so two reapers at once cannot both act on a run.
 */
export async function reap(deps: EngineDeps): Promise<ReapReport> {
  const now = deps.clock.now();
  const candidates = await deps.runs.listSilent(now - RELIABILITY.silenceThresholdMs);
  const actions: ReapReport['actions'] = [];
  for (const candidate of candidates) {
    try {
      const action = await reapOne(deps, candidate.runId, now);
      if (action) actions.push({ runId: candidate.runId, ...action });
    } catch (error) {
      if (error instanceof StoreError) {
        // Another reaper or the worker itself got there first: nothing to do.
        deps.logger.info('reaper lost a race; skipping', { runId: candidate.runId, reason: error.name });
        continue;
      }
      deps.logger.error('reaper could not handle a run', { runId: candidate.runId, error: String(error) });
    }
  }
  return { examined: candidates.length, actions };
}

async function reapOne(
  deps: EngineDeps,
  runId: string,
  now: number,
): Promise<{ verdict: string; action: string } | undefined> {
  // The index is eventually consistent: re-read and re-check before acting.
  const run = await deps.runs.get(runId);
  if (!run || !isActive(run.state)) return undefined;
  if (now - run.heartbeatAt <= RELIABILITY.silenceThresholdMs) return undefined;
  if (run.deferredUntil !== null && run.deferredUntil > now - RELIABILITY.silenceThresholdMs)
    return undefined;
  const source = await deps.sources.get(run.sourceId);
  if (!source) {
    await endRun(deps, run, {
      epoch: run.epoch,
      state: 'failed',
      failure: { reason: 'source_missing', message: `source ${run.sourceId} no longer exists` },
    });
    return { verdict: 'source_missing', action: 'fail' };
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
    orderedByModifiedTime: config.success ? connector.manifestFor(config.data).orderedByModifiedTime : false,
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
    return { verdict: decision.verdict, action: 'fail' };
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
  return { verdict: decision.verdict, action: decision.action };
}

/** Ends a crash loop: the page that keeps killing workers goes to dead_letters, the run fails with `restart_limit`. */
async function failCrashLoop(deps: EngineDeps, run: SyncRun): Promise<void> {
  const now = deps.clock.now();
  const cursor = run.nextPage > 1 ? (run.checkpoint?.cursor ?? '') : '';
  await deps.deadLetters.record({
    sourceId: run.sourceId,
    kind: 'page',
    ref: cursor,
    errorClass: 'permanent',
    reason: `page ${run.nextPage} stopped the worker ${run.restarts + 1} times (crash loop)`,
    attempts: run.restarts + 1,
    runId: run.runId,
    page: run.nextPage,
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
