import { RELIABILITY } from '../../config/constants.js';
import { secretReferences } from '../../connectors/secret-binding.js';
import { createSecretScrubber, type SecretScrubber } from '../../connectors/secret-scrub.js';
import { type HarvesterLogger, workLogger } from '../../observability/logger.js';
import { METRIC } from '../../observability/metrics.js';
import { scrubbedLogger } from '../../observability/scrubbed-logger.js';
import type { PageMessage } from '../../queue/page-message.js';
import type { SyncRun } from '../../run/model.js';
import { runParams } from '../../run/params.js';
import { partitionOf } from '../../run/partitions.js';
import { lastProgressAt } from '../../run/silence.js';
import type { StoredChain } from '../../store/chain-item.js';
import {
  DuplicatePageError,
  OwnershipLostError,
  PageOutOfOrderError,
  RequestRefusedError,
  RunStateError,
} from '../../store/errors.js';
import type { RunHead } from '../../store/run-heads.js';
import { failUnavailable } from '../chain/deferral.js';
import { resendFailedSuccessor } from '../chain/handoff.js';
import { planPartitions, wantsPartitions } from '../chain/planning.js';
import { PageUndeliverableError, UNDELIVERABLE } from '../chain/undeliverable.js';
import { type EngineDeps, SimulatedCrashError } from '../deps.js';
import { CHAINS_INLINE, endInlineRun, endRun, failOverBudget } from '../run/finish.js';
import { tell } from '../run/story.js';
import { retryDeadLetterPage } from '../work/dead-letter-retry.js';
import { fetchAndLoad } from '../work/page-work.js';
import { isTombstoneSlice } from '../work/tombstone-cursor.js';
import { tombstonePage } from '../work/tombstone-pass.js';
import type { StepContext, StepResult } from './context.js';
import { startHeartbeat } from './heartbeat.js';
import { type DropReason, dropReason, runDropReason } from './message-check.js';

/**
 * Processes one page message: drop it if stale, fetch with in-memory retries, load,
 * dead-letter failures, commit, and enqueue the next page or end the run. Storage errors other
 * than the store's own refusals propagate, so the message is redelivered and nothing is
 * committed half-way.
 */
export async function processPage(deps: EngineDeps, message: PageMessage): Promise<StepResult> {
  // One scrubber for the whole step: every value resolved in it is kept out of its log lines,
  // of what it stores, and of an error it lets escape (the handler logs that one).
  const scrubber = createSecretScrubber();
  try {
    return await stepMessage(deps, message, scrubber);
  } catch (error) {
    throw scrubbedError(error, scrubber);
  }
}

/** `error` with its message and stack scrubbed in place (its class decides what happens next). */
function scrubbedError(error: unknown, scrubber: SecretScrubber): unknown {
  if (!(error instanceof Error)) return scrubber.scrub(error);
  error.message = scrubber.scrub(error.message);
  if (error.stack !== undefined) error.stack = scrubber.scrub(error.stack);
  return error;
}

async function stepMessage(
  deps: EngineDeps,
  message: PageMessage,
  scrubber: SecretScrubber,
): Promise<StepResult> {
  const raw = workLogger(deps.logger, {
    runId: message.runId,
    sourceId: message.sourceId,
    epoch: message.epoch,
    page: message.page,
    ...(message.partition !== undefined ? { partition: message.partition } : {}),
  });
  const log = scrubbedLogger(raw, scrubber.scrub);
  // The run item this container kept from the run's previous page stands in for a read; the claim
  // confirms it (lib/store/run-heads.ts). A refused claim reads the run and judges again.
  const kept =
    message.partition === undefined ? deps.runs.heads.recall(message.runId, message.epoch) : undefined;
  if (kept && !runDropReason(kept.run, message)) {
    const result = await stepOnHead(deps, kept, message, log, true, scrubber);
    if (result !== HEAD_STALE) return result;
    deps.runs.heads.forget(message.runId);
  }
  const head = await deps.runs.heads.read(message.runId);
  const early =
    runDropReason(head?.run, message) ?? (head?.run.inlineChains ? dropReason(head.run, message) : undefined);
  if (early || !head) return dropped(deps, log, early ?? 'run_not_found');
  if (head.run.inlineChains) {
    log.warn('run stored by an earlier version; ending it', { reason: CHAINS_INLINE });
    await endInlineRun(deps, head.run);
    return { outcome: 'failed', reason: CHAINS_INLINE };
  }
  return (await stepOnHead(deps, head, message, log, false, scrubber)) as StepResult;
}

/** A kept run item the claim did not confirm: the step reads the run and starts again. */
const HEAD_STALE = Symbol('head stale');

/**
 * The step from its claim on, given the run item read (or kept, `kept`) before it. With a kept
 * item, a claim refused because the run moved on (fenced, ended, cancelled, gone) returns
 * {@link HEAD_STALE} before anything was done.
 */
async function stepOnHead(
  deps: EngineDeps,
  head: RunHead,
  message: PageMessage,
  log: HarvesterLogger,
  kept: boolean,
  scrubber: SecretScrubber,
): Promise<StepResult | typeof HEAD_STALE> {
  let run = head.run;
  let claimed = false;
  try {
    if (run.state === 'queued') await startOnce(deps, run);
    // The first heartbeat of the step, before any work: silence from here on means this worker
    // died. It reads the page's chain too: a refusal says the page is a duplicate or early.
    const chain = await claimPage(deps, run, message);
    if (typeof chain === 'string') return kept ? HEAD_STALE : dropped(deps, log, chain);
    claimed = true;
    run =
      run.state === 'queued'
        ? await deps.runs.require(run.runId)
        : await deps.runs.heads.withChain(head.item, chain);
    const early = await continuationChecks(deps, run, message, log);
    if (early) return early;
    return await processOwnedPage(deps, run, message, log, scrubber);
  } catch (error) {
    if (kept && !claimed && (error instanceof OwnershipLostError || error instanceof RunStateError))
      return HEAD_STALE;
    // Fenced, cancelled, finished or gone: the run is no longer this worker's.
    if (error instanceof OwnershipLostError) {
      deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: error.name });
      log.info('worker no longer owns the run; stopping', { reason: error.name });
      return { outcome: 'stopped', reason: error.name };
    }
    if (error instanceof PageUndeliverableError) {
      // The run was ended failed: its next page cannot be delivered. Nothing to redeliver.
      return { outcome: 'failed', reason: UNDELIVERABLE };
    }
    if (error instanceof DuplicatePageError || error instanceof PageOutOfOrderError) {
      // The claim (or a later write) found the page already taken or not yet due. A duplicate
      // re-sends its successor only when that send was seen to fail: a commit's successor is
      // never confirmed, so in a backlogged queue every duplicate would otherwise add a copy; the
      // reaper sends a silent run's unclaimed successor once (docs/reliability.md).
      if (error instanceof DuplicatePageError && (await resendFailedSuccessor(deps, message)))
        log.warn('the successor of this page failed to send; sent again at the same epoch');
      return dropped(deps, log, error instanceof DuplicatePageError ? 'duplicate_page' : 'page_out_of_order');
    }
    if (error instanceof RequestRefusedError) {
      // A request Harvester built wrong: every page would meet it, so it must be seen at once.
      deps.metrics.count(METRIC.requestsRefused);
      log.error('DynamoDB refused a request for its shape; the page fails', {
        reason: error.message,
        ...error.context,
      });
    }
    if (claimed && !(error instanceof SimulatedCrashError)) await handBack(deps, message, log);
    throw error;
  }
}

/**
 * The claim of the page (see `ChainStore.claim`): the page's chain as the claim left it, or why
 * the message names no work — a chain the run does not have is a partition of a plan a restart
 * from scratch replaced.
 */
async function claimPage(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
): Promise<StoredChain | DropReason> {
  try {
    return await deps.chains.claim(
      { runId: run.runId, partition: message.partition },
      run.epoch,
      message.page,
      deps.clock.now(),
    );
  } catch (error) {
    if (error instanceof RunStateError && error.context.nextPage === undefined)
      return message.partition !== undefined ? 'partition_unknown' : 'page_out_of_order';
    throw error;
  }
}

/** A message acknowledged without work. */
function dropped(deps: EngineDeps, log: HarvesterLogger, reason: DropReason): StepResult {
  deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: reason });
  log.info('message dropped', { reason });
  return { outcome: 'dropped', reason };
}

/**
 * A step that failed by exception leaves its message to SQS, which redelivers it after the
 * redelivery delay (and moves it to the page DLQ after `maxReceiveCount`): the run is marked as
 * waiting for that delivery, so the reaper does not fence it while the DLQ path runs its course.
 */
async function handBack(deps: EngineDeps, message: PageMessage, log: HarvesterLogger): Promise<void> {
  try {
    await deps.chains.handBack(
      { runId: message.runId, partition: message.partition },
      message.epoch,
      message.page,
      deps.clock.now(),
    );
  } catch (error) {
    log.warn('could not mark the failed page as handed back to the queue', { error: String(error) });
  }
}

/** queued → running, unless a concurrent delivery of page 1 already started the run. */
async function startOnce(deps: EngineDeps, run: SyncRun): Promise<void> {
  try {
    await deps.runs.start(run.runId, run.epoch, deps.clock.now());
  } catch (error) {
    if (!(error instanceof RunStateError)) throw error;
    // Someone else started it at this epoch; the page's own conditions arbitrate from here.
    return;
  }
  await tell(deps, run, {
    type: 'started',
    epoch: run.epoch,
    at: deps.clock.now(),
    detail: { mode: run.mode, trigger: run.trigger, verdict: run.resume.reason },
  });
}

/** Checks made before any fetch: the freshness budget on wake-up, the page budget. */
async function continuationChecks(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
  log: HarvesterLogger,
): Promise<StepResult | undefined> {
  const now = deps.clock.now();
  if (message.deferred && now - lastProgressAt(run) > RELIABILITY.progressBudgetMs) {
    log.warn('deferred page woke past the progress budget; the source stayed unavailable');
    return failUnavailable(deps, run, message, 'the page was deferred past the progress budget');
  }
  // The page budget counts the pages of every chain: it bounds the run, not one chain.
  if (run.progress.pages + 1 > deps.limits.maxPagesPerRun) return failOverBudget(deps, run);
  return undefined;
}

async function processOwnedPage(
  deps: EngineDeps,
  run: SyncRun,
  message: PageMessage,
  log: HarvesterLogger,
  scrubber: SecretScrubber,
): Promise<StepResult> {
  const { connectorName, rawConfig, configMac } = await runConnector(deps, run);
  const untrusted = await untrustedConfig(deps, run, connectorName, rawConfig, configMac);
  if (untrusted) {
    log.error('config refused: its signature does not verify', { reason: untrusted });
    await endRun(deps, run, {
      epoch: run.epoch,
      state: 'failed',
      failure: { reason: 'config_unverified', message: untrusted },
    });
    return { outcome: 'failed', reason: 'config_unverified' };
  }
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
  const heartbeat = startHeartbeat(deps, run.runId, run.epoch, message.partition);
  const context: StepContext = {
    deps,
    run,
    params: runParams(run),
    message,
    partition: partitionOf(run, message.partition),
    connector,
    config: parsed.data,
    heartbeat,
    log,
    scrubber,
    async checkpointHook(point) {
      await deps.hooks?.at?.(point, {
        runId: run.runId,
        epoch: run.epoch,
        page: message.page,
        ...(message.partition !== undefined ? { partition: message.partition } : {}),
      });
      this.ensureOwned();
    },
    ensureOwned() {
      const lost = heartbeat.lost();
      if (lost) throw lost;
    },
  };
  try {
    await context.checkpointHook('beforeFetch');
    if (run.mode === 'dlq_retry') return await retryDeadLetterPage(context);
    if (isTombstoneSlice(message.cursor)) return await tombstonePage(context);
    if (wantsPartitions(context)) return await planPartitions(context);
    return await fetchAndLoad(context);
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
): Promise<{ connectorName: string; rawConfig: unknown; configMac: string | null }> {
  const params = runParams(run);
  if (params.connector && params.config)
    return { connectorName: params.connector, rawConfig: params.config, configMac: params.configMac ?? null };
  const source = await deps.sources.require(run.sourceId);
  return { connectorName: source.connector, rawConfig: source.config, configMac: source.configMac };
}

/**
 * Why the run's config may not be trusted, or undefined when it may. A config that sends a secret
 * must carry the API's MAC (lib/engine/sources/config-trust.ts), checked before any secret is resolved: a
 * row or snapshot written by another role cannot point a secret anywhere. A config without secret
 * references has nothing to steal and runs as stored (its URLs still pass the source posture).
 */
async function untrustedConfig(
  deps: EngineDeps,
  run: SyncRun,
  connectorName: string,
  rawConfig: unknown,
  configMac: string | null,
): Promise<string | undefined> {
  if (secretReferences(rawConfig).length === 0) return undefined;
  return deps.trust.configProblem(run.sourceId, connectorName, rawConfig, configMac);
}
