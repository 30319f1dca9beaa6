import { METRIC } from '../observability/metrics.js';
import type { PageMessage } from '../queue/page-message.js';
import type { SyncRun } from '../run/model.js';
import type { EngineDeps } from './deps.js';

/*
 * Handing a page to the queue (DESIGN §4.10). The write that makes a page due (creation, commit,
 * deferral, fence) records it as handed over; the send is confirmed right after it succeeds; the
 * worker that takes the page clears the handoff with its first heartbeat. A handoff whose send
 * was never confirmed is a successor that may have been lost between commit and send: it is
 * sent again at the same epoch, never restarted.
 */

/** Sends a page message now and confirms its handoff on the run. */
export async function sendPage(deps: EngineDeps, message: PageMessage): Promise<void> {
  await deps.queue.send(message);
  await deps.runs.confirmSent(message.runId, message.epoch, message.page, deps.clock.now());
}

/** The run's expected page at its current epoch, continuing from its checkpoint. */
export function expectedPage(run: SyncRun): PageMessage {
  return {
    v: 1,
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    page: run.nextPage,
    // Page 1 has no cursor; a later page continues where the last commit left off (null: the
    // stream ended and only the finish is missing, which the step completes).
    cursor: run.nextPage > 1 ? (run.checkpoint?.cursor ?? null) : null,
    ...(run.deferredUntil !== null ? { deferred: true } : {}),
  };
}

/**
 * Sends the run's expected page again at the same epoch: no fence, no restart, no progress lost.
 * A second copy is harmless: the commit condition on `nextPage` lets exactly one delivery win.
 */
export async function resendExpectedPage(
  deps: EngineDeps,
  run: SyncRun,
  reason: 'send_unconfirmed' | 'wait_exceeded' | 'duplicate_noticed',
): Promise<PageMessage | undefined> {
  const message = expectedPage(run);
  if (!run.handoff) return undefined;
  const renewed = await deps.runs.renewHandoff(
    run.runId,
    run.epoch,
    run.nextPage,
    run.handoff.at,
    deps.clock.now(),
  );
  // Another reaper or delivery re-sent it first, or a worker took the page meanwhile.
  if (!renewed) return undefined;
  await sendPage(deps, message);
  deps.metrics.count(METRIC.pagesResent, 1, { name: 'Reason', value: reason });
  deps.logger.warn('expected page sent again at the same epoch', {
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    page: message.page,
    reason,
  });
  return message;
}
