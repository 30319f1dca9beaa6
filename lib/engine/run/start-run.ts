import { ulid } from 'ulid';
import { hasStablePosition } from '../../connectors/contract.js';
import type { DeadLetterFilter } from '../../run/dead-letter-filter.js';
import { runParamsHash } from '../../run/hash.js';
import type { RunMode, RunTrigger, SyncRun } from '../../run/model.js';
import type { RunParams } from '../../run/params.js';
import { pageMessage, sendPage } from '../chain/handoff.js';
import type { EngineDeps } from '../deps.js';
import { startingPoint, streamHash } from './watermark.js';

/** A request to start a run. */
export interface StartRunInput {
  readonly sourceId: string;
  readonly mode: RunMode;
  /** Narrows what the run covers (connector-specific); part of the params hash. */
  readonly scope?: unknown;
  /** Who starts it (shown on the run, not part of the params hash). Default `api`. */
  readonly trigger?: RunTrigger;
  /**
   * Most partitions the run may be split into (default: the stack's `MAX_PARTITIONS_PER_RUN`);
   * 1: read as one stream. Only runs whose connector can plan windows are ever split.
   */
  readonly partitions?: number;
  /** `dlq_retry`: retry only the open dead letters matching this filter (default: all of them). */
  readonly deadLetterFilter?: DeadLetterFilter;
}

/**
 * Starts a run: takes the source lock and creates the queued run in one transaction,
 * then enqueues page 1. A second start on a busy source fails with `SourceBusyError` naming the
 * active run. If the enqueue is lost (a crash right here), the run's handoff of page 1 stays
 * unconfirmed and the reaper sends page 1 itself, at the same epoch.
 */
export async function startRun(deps: EngineDeps, input: StartRunInput): Promise<SyncRun> {
  const now = deps.clock.now();
  const source = await deps.sources.require(input.sourceId);
  const connector = deps.connectors.get(source.connector);
  const config = connector.configSchema.parse(source.config) as Record<string, unknown>;
  const stream = streamHash(connector, source.connector, config);
  // An incremental run over a stream that cannot be keyed reads everything, and says so.
  const manifest = connector.manifestFor(config);
  const keyed = hasStablePosition(manifest);
  const unkeyedIncremental = input.mode === 'incremental' && !keyed;
  // A source configured with its own lookback (long transactions, lagging replicas) uses it.
  const lookbackMs = manifest.watermarkLookbackMs ?? deps.limits.watermarkLookbackMs;
  const start = unkeyedIncremental
    ? { since: null, watermark: null }
    : startingPoint(source, stream, input.mode, lookbackMs);
  const params: RunParams = {
    since: start.since,
    watermark: start.watermark,
    stream,
    scope: input.scope ?? null,
    configHash: source.configHash,
    connector: source.connector,
    // The row's config as signed (the worker parses it at every step), with its MAC.
    config: source.config,
    ...(source.configMac ? { configMac: source.configMac } : {}),
    ...(input.mode === 'dlq_retry' ? { deadLettersBefore: now } : {}),
    ...(input.mode === 'dlq_retry' && input.deadLetterFilter
      ? { deadLetterFilter: input.deadLetterFilter }
      : {}),
    ...(input.partitions !== undefined ? { partitions: input.partitions } : {}),
  };
  const run = await deps.lifecycle.createHoldingLock({
    runId: ulid(now),
    sourceId: source.sourceId,
    mode: input.mode,
    params,
    paramsHash: runParamsHash({ mode: input.mode, connector: source.connector, config, scope: params.scope }),
    resume: { reason: unkeyedIncremental ? 'stream_unordered' : 'fresh_start', from: 'scratch', at: now },
    trigger: input.trigger ?? 'api',
    // Read once here, so the run's pages ask dead_letters only when there is something to resolve.
    itemDeadLetters: await deps.deadLetters.hasOpenItems(source.sourceId),
    now,
  });
  await sendPage(deps, pageMessage(run, 1, null));
  deps.logger.info('run started', {
    runId: run.runId,
    sourceId: run.sourceId,
    mode: run.mode,
    trigger: run.trigger,
  });
  return run;
}
