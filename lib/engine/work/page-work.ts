import { RELIABILITY } from '../../config/constants.js';
import type { Entity, FetchedPage, TimeWindow } from '../../connectors/contract.js';
import { unidentifiedRef } from '../../connectors/unidentified.js';
import { METRIC } from '../../observability/metrics.js';
import type { RetryOutcome } from '../../retry/outcome.js';
import { FIRST_EPOCH } from '../../run/model.js';
import { readWindow } from '../../run/partitions.js';
import type { FiledBy } from '../../store/dead-letters.js';
import { DuplicatePageError } from '../../store/errors.js';
import type { ItemProvenance } from '../../store/item-provenance.js';
import { chainWatch, failCursorCycle, failPagesInRow, tooManyFailing } from '../chain/chain-guards.js';
import { continueRun } from '../chain/continue.js';
import { deferPage } from '../chain/deferral.js';
import { commitPartitionPage } from '../chain/partition-work.js';
import {
  carriedPosition,
  POSITION_TOO_LARGE,
  PositionTooLargeError,
  resolvedPosition,
} from '../chain/positions.js';
import { endRun } from '../run/finish.js';
import { tellPages } from '../run/story.js';
import { effectiveSince, pageWatermark, recordsAhead, startingWatermark } from '../run/watermark.js';
import { connectorContext } from '../sources/connector-context.js';
import { newRequestTrail, type RequestTrail, stepProvenance } from '../sources/request-trail.js';
import { droppedAsDuplicate, type StepContext, type StepResult } from '../step/context.js';
import { pageRef, pageScope } from '../step/page-scope.js';
import { fileItemDeadLetter, mayResolveItemDeadLetters } from './item-dead-letters.js';
import { retryOwned } from './owned-retry.js';
import { recordListed } from './seen-listing.js';
import { unreadByPartition } from './tail-reads.js';
import { afterListingPage } from './tombstone-cursor.js';

export { laterVersion } from '../run/watermark.js';
export { ownedRetryDeps, retryOwned } from './owned-retry.js';

/**
 * Fetches a page with the retry loop, on the step's abort signal, in the run's own scope — or in
 * `scope` (a retried dead letter: the since and config of the run that failed it).
 */
export async function fetchWithRetry(
  context: StepContext,
  cursor: string | null,
  scope?: { since: string | null; config: unknown; window?: TimeWindow },
  /** Notes the request that answered, for the provenance of the page's entities. */
  trail?: RequestTrail,
): Promise<RetryOutcome<FetchedPage>> {
  const { connector, config, params } = context;
  return retryOwned(context, async () =>
    connector.fetchPage(
      scope?.config ?? config,
      // A stored position is read in the attempt: if it is gone, the page fails for good.
      await resolvedPosition(context.deps, cursor),
      scope
        ? connectorContext(context, scope.since, scope.window, trail, scope.config)
        : connectorContext(context, effectiveSince(connector, params), undefined, trail),
    ),
  );
}

/** Normal modes (full, incremental, reconciliation): fetch the page, load it, commit, continue. */
export async function fetchAndLoad(context: StepContext): Promise<StepResult> {
  const { run, message, partition } = context;
  const trail = newRequestTrail();
  const outcome = await fetchWithRetry(context, message.cursor, undefined, trail);
  context.ensureOwned();
  if (outcome.kind === 'defer') return deferPage(context, outcome.untilMs, outcome.reason, outcome.attempts);
  if (outcome.kind === 'dead_letter')
    return pageDeadLettered(context, outcome.reason, outcome.errorClass, outcome.attempts);

  const page = outcome.value;
  const normalized = await normalizeAll(context, page.items);
  const failures = normalized.failures;
  // A partition's tail pass lists again the entities it read at its latest version: not twice.
  const entities = partition
    ? await unreadByPartition(context.deps.items, run.sourceId, partition, normalized.entities)
    : normalized.entities;
  const loaded = await loadEntities(context, entities, stepProvenance(context, trail));
  await recordListed(context, [...normalized.entities.map((e) => e.id), ...normalized.invalid]);
  await context.checkpointHook('afterLoad');
  // A stream ordered by key states its watermark (its listing's start minus a skew margin).
  const watermark =
    page.watermark !== undefined
      ? page.watermark
      : pageWatermark(
          (partition ?? run).checkpoint?.watermark ?? startingWatermark(context.params),
          entities.map((e) => e.version),
          page.watermarkCeiling,
        );
  return commitAndContinue(context, {
    cursor: afterListingPage(context, page.nextCursor),
    watermark,
    ahead: recordsAhead(run, context.connector.manifestFor(context.config), entities),
    processed: loaded.loaded,
    errors: failures + loaded.failed,
    // A partition's page tells about its window only; the run's total came with its plan.
    total: partition ? null : estimatedTotal(run, page),
    statedTotal: partition ? null : (page.total ?? null),
    ceiling: page.watermarkCeiling ?? null,
    read: entities,
  });
}

/**
 * The run's total as the source lets us estimate it: the listing's own total, or what the run
 * processed so far plus what this page and the ones after it hold. Null: unknown (the previous
 * estimate stands). A succeeded run's total is set to what it processed when it ends.
 */
function estimatedTotal(run: StepContext['run'], page: FetchedPage): number | null {
  if (page.total !== undefined && page.total !== null) return page.total;
  if (page.remaining === undefined || page.remaining === null) return null;
  return run.progress.processed + page.remaining;
}

/** Normalizes raw records; invalid ones go to dead_letters. Duplicate ids in a page keep the newest version. */
async function normalizeAll(
  context: StepContext,
  raws: unknown[],
): Promise<{ entities: Entity[]; failures: number; invalid: string[] }> {
  const { deps, run, message, connector, config } = context;
  const byId = new Map<string, Entity>();
  // Ids of records that do not normalize: they still exist at the source (a reconciliation's seen).
  const invalid: string[] = [];
  let failures = 0;
  for (const raw of raws) {
    const result = connector.normalize(config, raw);
    if (result.ok) {
      const seen = byId.get(result.entity.id);
      if (!seen || seen.version < result.entity.version) byId.set(result.entity.id, result.entity);
      continue;
    }
    // Without an id, the record's content names it: listed again, it files the same entry.
    const ref = result.ref ?? unidentifiedRef(raw);
    if (result.ref) invalid.push(result.ref);
    const counted = await fileItemDeadLetter(
      context,
      {
        sourceId: run.sourceId,
        ref,
        errorClass: 'permanent',
        reason: `invalid record: ${result.reason}`,
        attempts: 1,
        runId: run.runId,
        page: message.page,
        payload: raw,
        ...(context.partition?.window.from ? { windowFrom: context.partition.window.from } : {}),
        ...(context.partition?.window.until ? { windowUntil: context.partition.window.until } : {}),
        now: deps.clock.now(),
      },
      passFiler(context, ref),
    );
    if (counted) failures += 1;
  }
  if (failures > 0) deps.metrics.count(METRIC.deadLetters, failures, { name: 'Kind', value: 'item' });
  return { entities: [...byId.values()], failures, invalid };
}

/**
 * A record that does not normalize which this pass of a partitioned run already filed (and
 * counted) is not filed or counted again: the open window's tail pass lists again the records
 * after the latest valid version it read, and a record of unknown time sitting at a boundary is
 * listed by the windows on both sides (the earlier one lists it before the record that ends it).
 * Both deliver it, since skipping it in either could lose it when a neighbouring record is edited
 * away; whichever files second does not count it — decided by the filing's own conditional write,
 * since both windows may list it at the same moment. A window's own earlier filing (a page redone
 * after a crash, its count never committed) is counted.
 */
function passFiler(context: StepContext, ref: string | null): FiledBy | undefined {
  const partition = context.partition;
  if (!partition || ref === null) return undefined;
  const { from, until } = partition.window;
  return { runId: context.run.runId, from, until, tail: partition.tailFrom !== null };
}

/**
 * Loads entities; an item too large for DynamoDB, or holding a value it cannot store, is
 * dead-lettered alone, never allowed to fail the page.
 * `stored`: the ids now held in the store (written, or kept at a newer version already there).
 */
export async function loadEntities(
  context: StepContext,
  entities: Entity[],
  /** Where the entities came from; default: the step's run, page and window, no request. */
  provenance: ItemProvenance = stepProvenance(context),
): Promise<{ loaded: number; failed: number; stored: ReadonlySet<string> }> {
  const { deps, run, message } = context;
  // Read first, write only what changed. An unchanged entity is skipped only at the run's first
  // epoch: after a restart, a fenced worker of an earlier epoch may still write, and only this
  // epoch's own write (its writer key sorts later) keeps it from having the last word.
  const results = await deps.items.loadAll(
    run.sourceId,
    entities,
    run.runId,
    deps.clock.now(),
    run.epoch,
    provenance,
    { skipUnchanged: run.epoch === FIRST_EPOCH },
    run.startedAt ?? run.createdAt, // an older tombstone falls to an equal version (ItemStore.load)
  );
  let failed = 0;
  for (const result of results) {
    if (result.status !== 'too_large' && result.status !== 'unstorable') continue;
    failed += 1;
    await fileItemDeadLetter(context, {
      sourceId: run.sourceId,
      ref: result.entityId,
      errorClass: 'permanent',
      reason:
        result.status === 'too_large'
          ? `item too large: ${result.bytes} bytes, the limit is ${RELIABILITY.maxItemBytes}`
          : `record cannot be stored: ${result.reason}`,
      attempts: 1,
      runId: run.runId,
      page: message.page,
      now: deps.clock.now(),
    });
  }
  deps.metrics.count(METRIC.itemsLoaded, results.length - failed);
  const stored = results
    .filter((r) => r.status === 'written' || r.status === 'kept_newer' || r.status === 'unchanged')
    .map((r) => r.entityId);
  // A stored entity's old item dead letter is over (a retry-failed run resolves its own entries).
  if (run.mode !== 'dlq_retry' && mayResolveItemDeadLetters(context)) {
    await deps.deadLetters.resolveLoaded(run.sourceId, stored, deps.clock.now());
  }
  return { loaded: results.length - failed, failed, stored: new Set(stored) };
}

/**
 * A page whose fetch failed for good: record it; continue past it when the connector can
 * compute the next cursor without the response, otherwise end the run failed with its
 * checkpoint intact.
 */
async function pageDeadLettered(
  context: StepContext,
  reason: string,
  errorClass: 'transient' | 'permanent',
  attempts: number,
): Promise<StepResult> {
  const { deps, run, message, connector, config } = context;
  const window = context.partition ? readWindow(context.partition) : undefined;
  await deps.deadLetters.record({
    sourceId: run.sourceId,
    kind: 'page',
    // A cursor filed before cursors were scrubbed may still carry a value; the ref (and so the
    // entry id, which is the hash of a redacted ref) is filed scrubbed.
    ref: context.scrubber.scrub(pageRef(message.cursor, window)),
    errorClass,
    reason,
    attempts,
    runId: run.runId,
    page: message.page,
    scope: pageScope(run, effectiveSince(connector, context.params), window),
    now: deps.clock.now(),
  });
  deps.metrics.count(METRIC.deadLetters, 1, { name: 'Kind', value: 'page' });
  const manifest = connector.manifestFor(config);
  if (manifest.cursorComputableWithoutResponse && connector.nextCursorWithoutResponse) {
    if (tooManyFailing(context)) return failPagesInRow(context, reason);
    context.log.warn('page dead-lettered; continuing with the computed next cursor', { reason });
    return commitAndContinue(context, {
      failed: true,
      cursor: connector.nextCursorWithoutResponse(config, await resolvedPosition(deps, message.cursor)),
      watermark: (context.partition ?? run).checkpoint?.watermark ?? startingWatermark(context.params),
      processed: 0,
      errors: 1,
      total: null,
    });
  }
  context.log.error('page dead-lettered; the run cannot continue past it', { reason });
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: 'page_failed',
      message: `${message.partition !== undefined ? `page ${message.page} of partition ${message.partition}` : `page ${message.page}`} could not be fetched: ${reason}`,
    },
  });
  return { outcome: 'failed', reason: 'page_failed' };
}

/** Commits the page and enqueues its successor or ends the run. */
export async function commitAndContinue(
  context: StepContext,
  page: {
    cursor: string | null;
    watermark: string | null;
    /** The page failed for good and is skipped (its next cursor computed without it). */
    failed?: boolean;
    processed: number;
    errors: number;
    total: number | null;
    /** The total the source itself stated on the page (kept apart from estimates: a run's outcome keeps it). */
    statedTotal?: number | null;
    /** Items the page tombstoned (reconciliation's tombstone pass). */
    tombstoned?: number;
    /** Dead letters the page resolved as gone (retry-failed). */
    gone?: number;
    /** Records the page read stamped past the run's clock. */
    ahead?: number;
    /** The page's watermark ceiling (a tie group read by position); kept per partition. */
    ceiling?: string | null;
    /** The entities the page read (a partition keeps its latest version and the ids at it). */
    read?: readonly { id: string; version: string }[];
  },
  /** Work that only the delivery whose commit won may do (retry-failed runs resolve their entries here). */
  onCommitted?: () => Promise<void>,
): Promise<StepResult> {
  const { deps, run, message } = context;
  const watch = chainWatch(context, page.cursor, page.failed === true);
  if (watch.cycle) return failCursorCycle(context);
  let cursor: string | null;
  try {
    cursor = await carriedPosition(deps, run.runId, message.partition, message.page + 1, page.cursor);
  } catch (error) {
    if (error instanceof PositionTooLargeError) return failPositionTooLarge(context, error);
    throw error;
  }
  if (context.partition)
    return commitPartitionPage(context, context.partition, { ...page, cursor, guards: watch.extras });
  try {
    await deps.chains.commit({
      ref: { runId: run.runId },
      epoch: run.epoch,
      page: message.page,
      checkpoint: { cursor, watermark: page.watermark, ...watch.extras },
      processed: page.processed,
      errors: page.errors,
      total: page.total,
      ...(page.statedTotal != null ? { statedTotal: page.statedTotal } : {}),
      ...(page.tombstoned ? { tombstoned: page.tombstoned } : {}),
      ...(page.gone ? { gone: page.gone } : {}),
      ...(page.ahead ? { ahead: page.ahead } : {}),
      now: deps.clock.now(),
    });
  } catch (error) {
    if (error instanceof DuplicatePageError)
      return droppedAsDuplicate(context, 'page already committed by another delivery; dropping');
    throw error;
  }
  deps.metrics.count(METRIC.pagesCommitted);
  await tellPages(deps, run, {
    partition: undefined,
    page: message.page,
    processed: run.progress.processed + page.processed,
  });
  await onCommitted?.();
  await context.checkpointHook('afterCommit');
  // The watermark just committed with the page: no need to read the run back.
  const next = await continueRun(deps, run, message.page, cursor, page.watermark);
  if (next === 'over_budget') return { outcome: 'failed', reason: 'page_budget_exceeded' };
  return { outcome: 'committed', next };
}

/** A position larger than a run may keep: the run ends failed at its last checkpoint, saying why. */
async function failPositionTooLarge(context: StepContext, error: PositionTooLargeError): Promise<StepResult> {
  const { deps, run } = context;
  context.log.error('the next position is too large to keep; the run ends failed', { reason: error.message });
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: POSITION_TOO_LARGE,
      message: `${error.message}. A keyset position names the records read at one modification time; a smaller page size keeps it smaller.`,
    },
  });
  return { outcome: 'failed', reason: POSITION_TOO_LARGE };
}
