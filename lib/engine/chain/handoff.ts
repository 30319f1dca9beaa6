import { METRIC } from '../../observability/metrics.js';
import type { PageMessage } from '../../queue/page-message.js';
import { chainAt, nextCursor } from '../../run/chains.js';
import type { SyncRun } from '../../run/model.js';
import type { EngineDeps } from '../deps.js';
import { deliverOrFail, PageUndeliverableError } from './undeliverable.js';

/*
 * Handing a page to the queue. The write that makes a page due (creation, commit,
 * deferral, fence) records it as handed over; the worker that takes the page clears the handoff
 * with its claim. A page commit's successor is sent without a confirmation write: on a healthy
 * queue the next claim ends the handoff milliseconds later, so a confirmation would be a write per
 * page that says nothing the claim does not. The rarer handoffs (run start, fence, re-send,
 * deferral, tail pass) confirm their send. A handoff still unclaimed and unconfirmed once the run
 * is silent is a successor that may have been lost between commit and send, or one waiting in a
 * backlogged queue: the reaper sends it again once, at the same epoch, and confirms that send
 * (see docs/reliability.md); never a restart.
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
 * Sends the successor a page commit just handed over, without confirming the send: the claim of
 * the next worker ends the handoff (see the module comment). A message that cannot be delivered
 * at all ends the run failed and throws `PageUndeliverableError`.
 */
export async function handOver(deps: EngineDeps, message: PageMessage): Promise<void> {
  try {
    await deliverOrFail(deps, message, () => deps.queue.send(message));
  } catch (error) {
    if (!(error instanceof PageUndeliverableError)) await noteSendFailed(deps, message);
    throw error;
  }
}

/**
 * Sends the first pages of a run's new chains (a partition plan) in as few `SendMessageBatch`
 * calls as SQS allows, without confirmation writes: as for a commit's successor, each chain's
 * first claim ends its handoff, and one write could not confirm chains that are each their own
 * item. Failed entries are marked and the step fails, as {@link handOver} does.
 */
export async function handOverAll(deps: EngineDeps, messages: readonly PageMessage[]): Promise<void> {
  const [first] = messages;
  if (!first) return;
  const failed = await deliverOrFail(deps, first, () => deps.queue.sendBatch(messages));
  if (failed.length === 0) return;
  for (const message of failed) await noteSendFailed(deps, message);
  throw new Error(
    `SQS failed ${failed.length} of ${messages.length} first pages (partitions ${failed.map((m) => m.partition).join(', ')})`,
  );
}

/** Marks the handoff of a failed send, best effort: the reaper re-sends it anyway once the run is silent. */
async function noteSendFailed(deps: EngineDeps, message: PageMessage): Promise<void> {
  const ref = { runId: message.runId, partition: message.partition };
  try {
    await deps.chains.noteSendFailed(ref, message.epoch, message.page, deps.clock.now());
  } catch (error) {
    deps.logger.warn('could not note the failed send of the next page', {
      runId: message.runId,
      page: message.page,
      error: String(error),
    });
  }
}

/**
 * A redelivered copy of a chain's last committed page: when the send of its successor failed
 * (see {@link handOver}), sends the successor again at the same epoch. Reads the run: only a
 * duplicate delivery pays it.
 */
export async function resendFailedSuccessor(deps: EngineDeps, message: PageMessage): Promise<boolean> {
  const run = await deps.runs.get(message.runId);
  const chain = run && chainAt(run, message.partition);
  const handoff = chain?.handoff;
  if (run?.state !== 'running' || run.epoch !== message.epoch || !chain || !handoff) return false;
  if (message.page !== chain.nextPage - 1 || handoff.failedAt === undefined || handoff.sentAt !== null)
    return false;
  return (await resendExpectedPage(deps, run, 'send_failed', message.partition)) !== undefined;
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
  reason: 'send_unconfirmed' | 'wait_exceeded' | 'send_failed',
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
