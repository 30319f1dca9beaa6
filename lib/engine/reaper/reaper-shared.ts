import { RELIABILITY } from '../../config/constants.js';
import { type Connector, hasStablePosition } from '../../connectors/contract.js';
import { runParamsHash } from '../../run/hash.js';
import type { SyncRun } from '../../run/model.js';
import { runParams } from '../../run/params.js';
import type { SourceRecord } from '../../store/sources.js';
import type { EngineDeps } from '../deps.js';
import { endRun } from '../run/finish.js';
import { rearm } from '../run/restart.js';
import { pageRef, pageScope } from '../step/page-scope.js';

/** What the reaper knows about a silent run's source now, to judge whether the run is still the same job. */
export interface SourceNow {
  readonly source: SourceRecord;
  readonly connector: Connector<unknown>;
  /** The source's current config, parsed by its connector; undefined when it no longer parses. */
  readonly config: Record<string, unknown> | undefined;
  /** The params hash the run would have if it started now (detects reconfiguration). */
  readonly currentParamsHash: string;
  /** Whether the stream (for the current config) has a stable position. */
  readonly stable: boolean;
}

/** The run's source as it is now, or undefined when it was deleted (the run then fails `source_missing`). */
export async function sourceNow(deps: EngineDeps, run: SyncRun): Promise<SourceNow | undefined> {
  const source = await deps.sources.get(run.sourceId);
  if (!source) {
    await endRun(deps, run, {
      epoch: run.epoch,
      state: 'failed',
      failure: { reason: 'source_missing', message: `source ${run.sourceId} no longer exists` },
    });
    return undefined;
  }
  const connector = deps.connectors.get(source.connector);
  const parsed = connector.configSchema.safeParse(source.config);
  const config = parsed.success ? (parsed.data as Record<string, unknown>) : undefined;
  return {
    source,
    connector,
    config,
    currentParamsHash: config
      ? runParamsHash({ mode: run.mode, connector: source.connector, config, scope: run.params.scope })
      : 'invalid-config',
    stable: config ? hasStablePosition(connector.manifestFor(config)) : false,
  };
}

/** The parameters a run restarted because its source was reconfigured adopts. */
export function adoptedParams(
  run: SyncRun,
  now: SourceNow,
): { params: Record<string, unknown>; paramsHash: string } | undefined {
  if (!now.config) return undefined;
  const { configMac: _previousMac, ...params } = runParams(run);
  return {
    params: {
      ...params,
      connector: now.source.connector,
      // The row's config as signed, with its MAC (the worker verifies both).
      config: now.source.config,
      configHash: now.source.configHash,
      ...(now.source.configMac ? { configMac: now.source.configMac } : {}),
    },
    paramsHash: now.currentParamsHash,
  };
}

/**
 * Ends a crash loop: the page that keeps killing workers goes to dead_letters, the run fails with
 * `restart_limit`. `at` names the page (a partition's) when it is not the run's own expected page.
 */
export async function failCrashLoop(
  deps: EngineDeps,
  run: SyncRun,
  at?: {
    page: number;
    cursor: string | null;
    window: { from: string | null; until: string | null } | undefined;
  },
): Promise<void> {
  const now = deps.clock.now();
  const page = at?.page ?? run.nextPage;
  const cursor = at ? at.cursor : run.nextPage > 1 ? (run.checkpoint?.cursor ?? null) : null;
  // A retry-failed run's cursor walks dead_letters, not the source: filing it as a source page
  // would make the next retry fetch a listing cursor from the source. Its entries stay open.
  if (run.mode !== 'dlq_retry')
    await deps.deadLetters.record({
      sourceId: run.sourceId,
      kind: 'page',
      ref: pageRef(cursor, at?.window),
      errorClass: 'permanent',
      reason: `page ${page} stopped the worker ${run.restarts + 1} times (crash loop)`,
      attempts: run.restarts + 1,
      runId: run.runId,
      page,
      scope: pageScope(run, undefined, at?.window),
      now,
    });
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: 'restart_limit',
      message: `the run was restarted ${run.restarts} times and its worker went silent again on page ${page}`,
    },
    resume: { reason: 'restart_limit', from: 'none', at: now },
  });
}

/**
 * A run whose handed-over page was never taken and whose checkpoint has outlived the freshness
 * budget restarts from scratch (see docs/limits.md). The restart counts against the run's restart budget:
 * a page lost after every commit would otherwise restart the run every 6 hours forever. Past the
 * budget the run ends `failed` with `restart_limit`.
 */
export async function restartStale(
  deps: EngineDeps,
  run: SyncRun,
): Promise<'checkpoint_stale' | 'restart_limit'> {
  if (run.restarts >= RELIABILITY.maxRestartsPerRun) {
    await endRun(deps, run, {
      epoch: run.epoch,
      state: 'failed',
      failure: {
        reason: 'restart_limit',
        message: `the run was restarted ${run.restarts} times and its position was older than the 6 h freshness budget again (page ${run.nextPage} was never taken)`,
      },
      resume: { reason: 'restart_limit', from: 'none', at: deps.clock.now() },
    });
    return 'restart_limit';
  }
  await rearm(deps, run, { verdict: 'checkpoint_stale', countRestart: true });
  return 'checkpoint_stale';
}
