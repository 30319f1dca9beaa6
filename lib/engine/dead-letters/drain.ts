import { RELIABILITY } from '../../config/constants.js';
import { METRIC } from '../../observability/metrics.js';
import { MalformedMessageError, type PageMessage, parsePageMessage } from '../../queue/page-message.js';
import type { SyncRun } from '../../run/model.js';
import { partitionOf, readWindow } from '../../run/partitions.js';
import { DuplicatePageError } from '../../store/errors.js';
import { PAGES_FAILING } from '../chain/chain-guards.js';
import { continueRun } from '../chain/continue.js';
import { carriedPosition, resolvedPosition } from '../chain/positions.js';
import { PageUndeliverableError, settleMalformed } from '../chain/undeliverable.js';
import type { EngineDeps } from '../deps.js';
import { endRun } from '../run/finish.js';
import { tellPages } from '../run/story.js';
import { dropReason } from '../step/message-check.js';
import { pageRef, pageScope } from '../step/page-scope.js';
import { runConnector } from '../step/page-step.js';
import { listDeadLetterSlice } from '../work/dead-letter-retry.js';

export { UNKNOWN_SOURCE } from '../chain/undeliverable.js';

/** What the drain did with one message from the page DLQ. */
export type DrainResult =
  | { readonly outcome: 'malformed'; readonly entryId: string }
  | { readonly outcome: 'stale'; readonly reason: string }
  | { readonly outcome: 'continued'; readonly entryIds: readonly string[] }
  | { readonly outcome: 'failed_run'; readonly entryId: string };

/**
 * Turns a message the page queue gave up on into a dead_letters entry and settles its run
 *: a malformed message is filed with its body excerpt (and ends its run `failed` when
 * it is the page the run waits for: no copy of it can be read); a poison page of the run's
 * current epoch is recorded and the run continues past it when the connector can compute the
 * next cursor, or ends `failed` with its checkpoint intact — never left running. A retry-failed
 * run's page is not a source page: see {@link drainRetrySlice}.
 */
export async function drainDeadMessage(
  deps: EngineDeps,
  body: string,
  receiveCount: number,
): Promise<DrainResult> {
  const now = deps.clock.now();
  let message: PageMessage;
  try {
    message = parsePageMessage(body);
  } catch (error) {
    if (!(error instanceof MalformedMessageError)) throw error;
    // Filed; and when it is the page its run still waits for, that run ends failed: no copy of
    // it can ever be read, and the reaper would otherwise keep re-sending it.
    const settled = await settleMalformed(deps, body, error.message, receiveCount);
    if (settled?.endedRun) return { outcome: 'failed_run', entryId: settled.entryId };
    return { outcome: 'malformed', entryId: settled?.entryId ?? '' };
  }
  const run = await deps.runs.get(message.runId);
  const partition = run && partitionOf(run, message.partition);
  // The page step's own check: a message it would drop is stale here too.
  if (!run || dropReason(run, message) !== undefined) {
    // The run moved past this delivery (a stale duplicate that kept failing): nothing is lost.
    deps.logger.info('stale message drained', {
      runId: message.runId,
      page: message.page,
      epoch: message.epoch,
    });
    return {
      outcome: 'stale',
      reason: run ? `run is ${run.state} at epoch ${run.epoch}, page ${run.nextPage}` : 'run not found',
    };
  }
  const reason = `poison page: processing failed on ${receiveCount} deliveries`;
  if (run.mode === 'dlq_retry') return drainRetrySlice(deps, run, message, reason);
  const entryId = await deps.deadLetters.record({
    sourceId: run.sourceId,
    kind: 'page',
    ref: pageRef(message.cursor, partition ? readWindow(partition) : undefined),
    errorClass: 'permanent',
    reason,
    attempts: receiveCount,
    runId: run.runId,
    page: message.page,
    payload: body,
    scope: pageScope(run, undefined, partition ? readWindow(partition) : undefined),
    now,
  });
  deps.metrics.count(METRIC.deadLetters, 1, { name: 'Kind', value: 'page' });
  const { connectorName, rawConfig } = await runConnector(deps, run).catch(() => ({
    connectorName: undefined,
    rawConfig: undefined,
  }));
  const connector = connectorName ? deps.connectors.get(connectorName) : undefined;
  const config = connector?.configSchema.safeParse(rawConfig);
  if (
    // Partitions read keyed streams, whose next cursor always needs the response.
    message.partition === undefined &&
    connector?.nextCursorWithoutResponse &&
    config?.success &&
    connector.manifestFor(config.data).cursorComputableWithoutResponse
  ) {
    // Skipped pages in a row count toward the same limit as pages the worker failed for good.
    const prior = run.checkpoint?.page === message.page - 1 ? run.checkpoint : null;
    const failedInRow = (prior?.failedInRow ?? 0) + 1;
    if (failedInRow >= RELIABILITY.pageFailuresInRow) {
      await endRun(deps, run, {
        epoch: run.epoch,
        state: 'failed',
        failure: {
          reason: PAGES_FAILING,
          message: `${failedInRow} pages in a row of the run failed for good (pages ${message.page - failedInRow + 1}–${message.page}, last: ${reason}); each is in the dead-letter queue`,
        },
      });
      return { outcome: 'failed_run', entryId };
    }
    const computed = connector.nextCursorWithoutResponse(
      config.data,
      await resolvedPosition(deps, message.cursor),
    );
    const cursor = await carriedPosition(deps, run.runId, undefined, message.page + 1, computed);
    const watermark = run.checkpoint?.watermark ?? null;
    if (!(await commitDrained(deps, run, message.page, { cursor, watermark, failedInRow }, 1))) {
      return { outcome: 'stale', reason: 'page committed meanwhile' };
    }
    try {
      await continueRun(deps, run, message.page, cursor, watermark);
    } catch (error) {
      if (error instanceof PageUndeliverableError) return { outcome: 'failed_run', entryId };
      throw error;
    }
    return { outcome: 'continued', entryIds: [entryId] };
  }
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: 'poison_page',
      message: `${message.partition === undefined ? '' : `partition ${message.partition}, `}page ${message.page}: ${reason}`,
    },
  });
  return { outcome: 'failed_run', entryId };
}

/**
 * A retry-failed page the queue gave up on. Its cursor walks dead_letters, not the
 * source, so it is never filed as a source page (a later retry would fetch the dead-letters
 * cursor from the source): each entry of its slice stays open under its own kind and ref,
 * recorded as failed once more by this run. The next slice's cursor needs no source response, so
 * the run continues past the slice — or ends succeeded with these errors when it was the last.
 */
async function drainRetrySlice(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
  reason: string,
): Promise<DrainResult> {
  const slice = await listDeadLetterSlice(deps, run, message.cursor);
  const cursor = slice.cursor ?? null;
  const now = deps.clock.now();
  if (!(await commitDrained(deps, run, message.page, { cursor, watermark: null }, slice.items.length))) {
    return { outcome: 'stale', reason: 'page committed meanwhile' };
  }
  // Recorded only once the commit won, as the retry page does: a losing copy must not re-open
  // an entry the winner resolved.
  const entryIds: string[] = [];
  for (const entry of slice.items) {
    entryIds.push(
      await deps.deadLetters.record({
        sourceId: run.sourceId,
        kind: entry.kind,
        ref: entry.ref,
        errorClass: 'permanent',
        reason,
        attempts: 1,
        runId: run.runId,
        page: message.page,
        ...(entry.excerpt !== null ? { payload: entry.excerpt } : {}),
        now,
      }),
    );
    deps.metrics.count(METRIC.deadLetters, 1, { name: 'Kind', value: entry.kind });
  }
  deps.logger.error('poison retry-failed page drained: its entries stay open', {
    runId: run.runId,
    page: message.page,
    entries: entryIds.length,
  });
  await continueRun(deps, run, message.page, cursor, null);
  return { outcome: 'continued', entryIds };
}

/**
 * Commits a page the queue gave up on as read with `errors` errors, so the run's own chain moves
 * past it. False when another delivery committed the page meanwhile.
 */
async function commitDrained(
  deps: EngineDeps,
  run: SyncRun,
  page: number,
  checkpoint: { cursor: string | null; watermark: string | null; failedInRow?: number },
  errors: number,
): Promise<boolean> {
  try {
    await deps.chains.commit({
      ref: { runId: run.runId },
      epoch: run.epoch,
      page,
      checkpoint,
      processed: 0,
      errors,
      now: deps.clock.now(),
    });
  } catch (error) {
    if (error instanceof DuplicatePageError) return false;
    throw error;
  }
  await tellPages(deps, run, { partition: undefined, page, processed: run.progress.processed });
  return true;
}
