import { METRIC } from '../../observability/metrics.js';
import { partitionBound, windowsOf } from '../../run/partitions.js';
import { DuplicatePageError } from '../../store/errors.js';
import { tell } from '../run/story.js';
import { effectiveSince } from '../run/watermark.js';
import { connectorContext } from '../sources/connector-context.js';
import { concurrentRequestsPerCredential } from '../sources/rate-budget.js';
import type { StepContext, StepResult } from '../step/context.js';
import { fetchAndLoad, retryOwned } from '../work/page-work.js';
import { deferPage } from './deferral.js';
import { handOverAll, pageMessage } from './handoff.js';

/**
 * The planning step of a partitioned run: page 1 of an eligible run asks the connector where to
 * split its stream ({@link Connector.planWindows}), records one partition per window on the run
 * (one conditional write, like a page commit) and hands every partition's page 1 to the queue in
 * `SendMessageBatch` calls, unconfirmed like a commit's successor (see handoff.ts).
 * A plan with no usable boundary — a small stream, a source that cannot tell — leaves the run
 * one ordinary stream, read from this very step.
 */

/**
 * Whether this step plans partitions: the run's first page, in a mode that reads the whole
 * stream from one point (full, or an incremental run that has no watermark yet), over a
 * connector that can plan windows of a stream ordered by modification time with a keyset
 * position, with a bound above 1. Reconciliation runs are never split: their tombstone pass
 * needs one complete listing.
 */
export function wantsPartitions(context: StepContext): boolean {
  const { run, message, connector, config, params, deps } = context;
  if (message.partition !== undefined || message.page !== 1 || run.partitions) return false;
  if (!connector.planWindows) return false;
  const readsWholeStream =
    run.mode === 'full' || (run.mode === 'incremental' && effectiveSince(connector, params) === null);
  if (!readsWholeStream) return false;
  if (!connector.manifestFor(config).orderedByModifiedTime) return false;
  return partitionBound(params.partitions, deps.limits.maxPartitions, partitionCap(deps)) > 1;
}

/**
 * The most partitions any run gets, whatever its start asks: more than the credential's requests
 * in flight would only queue for them, and more than the source's share of the page workers
 * would let one source's run hold every worker slot (each partition keeps at most one page in a
 * worker at a time).
 */
function partitionCap(deps: StepContext['deps']): number {
  return Math.min(
    concurrentRequestsPerCredential(deps),
    deps.limits.maxWorkersPerSource ?? Number.POSITIVE_INFINITY,
  );
}

/** Plans the run's partitions and sends each one's first page; see the module comment. */
export async function planPartitions(context: StepContext): Promise<StepResult> {
  const { deps, run, connector, config, params, log } = context;
  const maxWindows = partitionBound(params.partitions, deps.limits.maxPartitions, partitionCap(deps));
  const since = effectiveSince(connector, params);
  const outcome = await retryOwned(context, () =>
    connector.planWindows!(
      config,
      { maxWindows, minEntitiesPerWindow: deps.limits.minEntitiesPerPartition },
      connectorContext(context, since),
    ),
  );
  context.ensureOwned();
  if (outcome.kind === 'defer') return deferPage(context, outcome.untilMs, outcome.reason, outcome.attempts);
  if (outcome.kind === 'dead_letter') {
    // Planning is an optimisation: a source that cannot answer it is read as one stream, and the
    // first page's own fetch decides (retry, defer, dead-letter) as for any run.
    log.warn('could not plan partitions; reading the stream as one', { reason: outcome.reason });
    return fetchAndLoad(context);
  }
  const plan = outcome.value;
  const windows = windowsOf(since, plan.boundaries, maxWindows);
  if (windows.length < 2) {
    log.info('stream not worth splitting; reading it as one', { total: plan.total, requests: plan.requests });
    return fetchAndLoad(context);
  }
  const now = deps.clock.now();
  try {
    await deps.chains.plan({ runId: run.runId, epoch: run.epoch, windows, total: plan.total, now });
  } catch (error) {
    if (error instanceof DuplicatePageError) {
      deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: 'duplicate_page' });
      return { outcome: 'dropped', reason: 'duplicate_page' };
    }
    throw error;
  }
  await tell(deps, run, {
    type: 'partition_planned',
    epoch: run.epoch,
    at: now,
    detail: { partitions: windows.length, total: plan.total },
  });
  log.info('run split into partitions', {
    partitions: windows.length,
    total: plan.total,
    requests: plan.requests,
    boundaries: windows.slice(1).map((w) => w.from),
  });
  await context.checkpointHook('afterCommit');
  await handOverAll(
    deps,
    windows.map((_, index) => pageMessage(run, 1, null, { partition: index })),
  );
  return { outcome: 'committed', next: 'enqueued' };
}
