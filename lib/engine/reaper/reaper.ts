import { RELIABILITY } from '../../config/constants.js';
import { METRIC } from '../../observability/metrics.js';
import { isActive } from '../../run/model.js';
import { StoreError } from '../../store/errors.js';
import { PageUndeliverableError, UNDELIVERABLE } from '../chain/undeliverable.js';
import type { EngineDeps } from '../deps.js';
import { publishOutcome } from '../run/finish.js';
import { type ReapOutcome, reapRun } from './reap-run.js';

export type { ReapOutcome } from './reap-run.js';

/** What one reaper pass did, run by run. */
export interface ReapReport {
  readonly examined: number;
  readonly actions: { readonly runId: string; readonly verdict: string; readonly action: string }[];
  /** Silent runs whose expected page waits in the queue: reported, never fenced, restarted or counted. */
  readonly waiting: { readonly runId: string; readonly since: number }[];
}

/**
 * One reaper pass (every minute): looks at active runs whose run item has been quiet for longer
 * than the silence threshold and judges each of their chains ({@link reapRun}): a chain whose
 * expected page waits in the queue is reported, not touched; a page whose send was never
 * confirmed is sent again at the same epoch; only a run one of whose workers took its page and
 * went silent is decided by the pure resume policy, fenced and re-enqueued — or failed as a crash
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
      if (outcome?.kind === 'acted' && outcome.waitingSince !== undefined)
        waiting.push({ runId: candidate.runId, since: outcome.waitingSince });
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
  if (isActive(run.state)) return reapRun(deps, run, now);
  // An ended run still in the outbox: its worker died (or its publish failed) before the
  // outcome event went out. Publish it now — at least once, possibly twice.
  if (run.outboxAt === null) return undefined;
  const published = await publishOutcome(deps, run);
  return published ? { kind: 'acted', verdict: 'outbox', action: 'publish' } : undefined;
}
