import type { ResumeVerdict, SyncRun } from '../run/model.js';
import type { EngineDeps } from './deps.js';
import { pageMessage, sendPage } from './handoff.js';

/**
 * Re-arms a run under a new epoch and enqueues where it continues: page 1 with no cursor
 * (`from: 'scratch'`) or the page after its checkpoint (`from: 'checkpoint'`). The fence is
 * conditional on the epoch read, so two deciders racing cannot both enqueue.
 */
export async function rearm(
  deps: EngineDeps,
  run: SyncRun,
  decision: {
    verdict: ResumeVerdict;
    from: 'scratch' | 'checkpoint';
    countRestart: boolean;
    /** Parameters the restarted run adopts (the source was reconfigured). */
    params?: { params: Record<string, unknown>; paramsHash: string };
  },
): Promise<number> {
  const now = deps.clock.now();
  const fromCheckpoint = decision.from === 'checkpoint' && run.checkpoint !== null;
  const page = fromCheckpoint ? run.nextPage : 1;
  const epoch = await deps.runs.fence({
    runId: run.runId,
    epoch: run.epoch,
    resume: { reason: decision.verdict, from: fromCheckpoint ? 'checkpoint' : 'scratch', at: now },
    reset: !fromCheckpoint,
    countRestart: decision.countRestart,
    page,
    ...(decision.params && !fromCheckpoint ? { params: decision.params } : {}),
    now,
  });
  await sendPage(
    deps,
    pageMessage(run, page, fromCheckpoint ? (run.checkpoint?.cursor ?? null) : null, { epoch }),
  );
  deps.logger.info('run re-armed', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch,
    verdict: decision.verdict,
    from: fromCheckpoint ? 'checkpoint' : 'scratch',
  });
  return epoch;
}
