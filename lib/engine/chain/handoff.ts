import { METRIC } from '../../observability/metrics.js';
import type { PageMessage } from '../../queue/page-message.js';
import { chainAt, nextCursor } from '../../run/chains.js';
import type { SyncRun } from '../../run/model.js';
import type { EngineDeps } from '../deps.js';
import { deliverOrFail } from './undeliverable.js';

/*
 * Handing a page to the queue. The write that makes a page due (creation, commit,
 * deferral, fence) records it as handed over; the send is confirmed right after it succeeds; the
 * worker that takes the page clears the handoff with its first heartbeat. A handoff whose send
 * was never confirmed is a successor that may have been lost between commit and send: it is
 * sent again at the same epoch, never restarted.
 */

/**
 * Sends a page message now and confirms its handoff on the run. A message that cannot be
 * delivered at all ends the run failed and throws `PageUndeliverableError` (see undeliverable.ts).
 */
export async function sendPage(deps: EngineDeps, message: PageMessage): Promise<void> {
  await deliverOrFail(deps, message, () => deps.queue.send(message));
  await deps.chains.confirmSent(
    { runId: message.runId, partition: message.partition },
    message.epoch,
    message.page,
    deps.clock.now(),
  );
}

/**
 * The message of page `page` of the run's chain (or of `partition`'s) at `epoch` (default: the
 * run's): every page message is one of these.
 */
export function pageMessage(
  run: Pick<SyncRun, 'runId' | 'sourceId' | 'epoch'>,
  page: number,
  cursor: string | null,
  options: { readonly partition?: number | undefined; readonly epoch?: number } = {},
): PageMessage {
  return {
    v: 1,
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: options.epoch ?? run.epoch,
    page,
    cursor,
    ...(options.partition !== undefined ? { partition: options.partition } : {}),
  };
}

/**
 * The expected page of the run's chain (or of one partition's) at the run's current epoch,
 * continuing from that chain's checkpoint.
 */
export function expectedPage(run: SyncRun, partition?: number): PageMessage {
  const chain = chainAt(run, partition) ?? chainAt(run, undefined)!;
  return {
    // Page 1 has no cursor; a later page continues where the last commit left off.
    ...pageMessage(run, chain.nextPage, nextCursor(chain), { partition }),
    ...(chain.deferredUntil !== null ? { deferred: true } : {}),
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
  partition?: number,
): Promise<PageMessage | undefined> {
  const chain = chainAt(run, partition);
  if (!chain?.handoff) return undefined;
  const message = expectedPage(run, partition);
  const renewed = await deps.chains.renewHandoff(
    { runId: run.runId, partition },
    run.epoch,
    chain.nextPage,
    chain.handoff.at,
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
    ...(partition !== undefined ? { partition } : {}),
    reason,
  });
  return message;
}
