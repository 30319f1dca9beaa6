import { RELIABILITY } from '../config/constants.js';
import type { Connector } from '../connectors/contract.js';
import { type HarvesterLogger, workLogger } from '../observability/logger.js';
import { METRIC } from '../observability/metrics.js';
import type { PageMessage } from '../queue/page-message.js';
import type { SyncRun } from '../run/model.js';
import {
  RunCancelledError,
  RunFencedError,
  RunFinishedError,
  RunNotFoundError,
  RunStateError,
  type StoreError,
} from '../store/errors.js';
import type { EngineDeps, StepPoint } from './deps.js';
import { endRun, failOverBudget } from './finish.js';
import { type Heartbeat, startHeartbeat } from './heartbeat.js';
import { dropReason } from './message-check.js';
import { fetchAndLoad } from './page-work.js';
import { rearm } from './restart.js';
import { retryFailedPage } from './retry-work.js';
import type { RunParams } from './start-run.js';
import { finalWatermark } from './watermark.js';

/** What became of one page message. */
export type StepResult =
  | { readonly outcome: 'dropped'; readonly reason: string }
  | { readonly outcome: 'committed'; readonly next: 'enqueued' | 'finished' }
  | { readonly outcome: 'deferred'; readonly until: number }
  | { readonly outcome: 'stopped'; readonly reason: string }
  | { readonly outcome: 'failed'; readonly reason: string }
  | { readonly outcome: 'restarted'; readonly reason: string };

/** Everything one page step works with, resolved once. */
export interface StepContext {
  readonly deps: EngineDeps;
  readonly run: SyncRun;
  readonly params: RunParams;
  readonly message: PageMessage;
  readonly connector: Connector<unknown>;
  readonly config: unknown;
  readonly heartbeat: Heartbeat;
  readonly log: HarvesterLogger;
  /** Runs the test hook at a step point, then stops if the run was lost meanwhile. */
  checkpointHook(point: StepPoint): Promise<void>;
  /** Throws the heartbeat's refusal (fenced, cancelled) if a beat learned the run is no longer ours. */
  ensureOwned(): void;
}

/** Errors that mean "this worker no longer owns the run": stop quietly, acknowledge the message. */
export function isOwnershipLoss(error: unknown): error is StoreError {
  return (
    error instanceof RunFencedError ||
    error instanceof RunCancelledError ||
    error instanceof RunFinishedError ||
    error instanceof RunNotFoundError
  );
}

/**
 * Processes one page message (DESIGN §1): drop it if stale, fetch with in-memory retries, load,
 * dead-letter failures, commit, and enqueue the next page or end the run. Storage errors other
 * than the store's own refusals propagate, so the message is redelivered and nothing is
 * committed half-way.
 */
export async function processPage(deps: EngineDeps, message: PageMessage): Promise<StepResult> {
  const log = workLogger(deps.logger, {
    runId: message.runId,
    sourceId: message.sourceId,
    epoch: message.epoch,
    page: message.page,
  });
  let run = await deps.runs.get(message.runId);
  const drop = dropReason(run, message);
  if (drop || !run) {
    deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: drop ?? 'run_not_found' });
    log.info('message dropped', { reason: drop });
    return { outcome: 'dropped', reason: drop ?? 'run_not_found' };
  }
  try {
    if (run.state === 'queued') {
      await startOnce(deps, run);
      run = await deps.runs.require(run.runId);
    }
    const early = await continuationChecks(deps, run, message, log);
    if (early) return early;
    return await processOwnedPage(deps, run, message, log);
  } catch (error) {
    if (isOwnershipLoss(error)) {
      deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: error.name });
      log.info('worker no longer owns the run; stopping', { reason: error.name });
      return { outcome: 'stopped', reason: error.name };
    }
    throw error;
  }
}

/** queued → running; a concurrent delivery of page 1 that already started the run is fine. */
async function startOnce(deps: EngineDeps, run: SyncRun): Promise<void> {
  try {
    await deps.runs.start(run.runId, run.epoch, deps.clock.now());
  } catch (error) {
    if (!(error instanceof RunStateError)) throw error;
    // Someone else started it at this epoch; the page's own conditions arbitrate from here.
  }
}

/** Checks made before any fetch: the freshness budget on wake-up, the end-of-stream marker, the page budget. */
async function continuationChecks(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
  log: HarvesterLogger,
): Promise<StepResult | undefined> {
  const now = deps.clock.now();
  if (message.deferred && run.checkpoint && now - run.checkpoint.at > RELIABILITY.checkpointFreshnessMs) {
    log.warn('deferred page woke past the freshness budget; restarting from scratch');
    await rearm(deps, run, { verdict: 'checkpoint_stale', from: 'scratch', countRestart: false });
    return { outcome: 'restarted', reason: 'checkpoint_stale' };
  }
  if (message.page > 1 && message.cursor === null) {
    // Resumed after the last page was committed but before the run was ended: finish it now.
    await finishSucceeded(deps, run, run.checkpoint?.watermark ?? null);
    return { outcome: 'committed', next: 'finished' };
  }
  if (message.page > deps.limits.maxPagesPerRun) return failOverBudget(deps, run);
  return undefined;
}

async function processOwnedPage(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
  log: HarvesterLogger,
): Promise<StepResult> {
  const { connectorName, rawConfig } = await runConnector(deps, run);
  const connector = deps.connectors.get(connectorName);
  const parsed = connector.configSchema.safeParse(rawConfig);
  if (!parsed.success) {
    await endRun(deps, run, {
      epoch: run.epoch,
      state: 'failed',
      failure: {
        reason: 'invalid_config',
        message: `the source's ${connectorName} config is invalid: ${parsed.error.message}`,
      },
    });
    return { outcome: 'failed', reason: 'invalid_config' };
  }
  const heartbeat = startHeartbeat(deps, run.runId, run.epoch);
  const context: StepContext = {
    deps,
    run,
    params: run.params as unknown as RunParams,
    message,
    connector,
    config: parsed.data,
    heartbeat,
    log,
    async checkpointHook(point) {
      await deps.hooks?.at?.(point, { runId: run.runId, epoch: run.epoch, page: message.page });
      this.ensureOwned();
    },
    ensureOwned() {
      const lost = heartbeat.lost();
      if (lost) throw lost;
    },
  };
  try {
    await context.checkpointHook('beforeFetch');
    return run.mode === 'dlq_retry' ? await retryFailedPage(context) : await fetchAndLoad(context);
  } finally {
    heartbeat.stop();
  }
}

/**
 * The connector and config a run works with: the snapshot taken at its start (no Sources read
 * per page), or, for runs created before snapshots existed, the source's current ones.
 */
export async function runConnector(
  deps: EngineDeps,
  run: SyncRun,
): Promise<{ connectorName: string; rawConfig: unknown }> {
  const params = run.params as Partial<RunParams>;
  if (params.connector && params.config) return { connectorName: params.connector, rawConfig: params.config };
  const source = await deps.sources.require(run.sourceId);
  return { connectorName: source.connector, rawConfig: source.config };
}

/** Ends a run whose stream is complete: runs over a keyed stream commit their watermark with the success. */
export async function finishSucceeded(
  deps: EngineDeps,
  run: SyncRun,
  watermark: string | null,
): Promise<void> {
  if (run.mode === 'reconciliation') await reconcile(deps, run);
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'succeeded',
    watermark: finalWatermark(deps, run, watermark),
  });
}

/**
 * The end of a reconciliation listing: tombstone the items it did not see — only when no page of
 * the listing failed, since a missing page would make live entities look deleted.
 */
async function reconcile(deps: EngineDeps, run: SyncRun): Promise<void> {
  const entries = await deps.deadLetters.list(run.sourceId, { runId: run.runId, limit: 1_000 });
  const failedPages = entries.items.filter((entry) => entry.kind === 'page').length;
  if (failedPages > 0 || entries.cursor) {
    deps.logger.warn('reconciliation listing had failed pages; nothing tombstoned', {
      runId: run.runId,
      failedPages,
    });
    return;
  }
  const tombstoned = await deps.items.tombstoneUnseen(run.sourceId, run.runId, deps.clock.now());
  deps.logger.info('reconciliation tombstoned unseen items', { runId: run.runId, count: tombstoned.length });
}
