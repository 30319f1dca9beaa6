import type { SourceDefinition, SourceRecord, SourceSchedule } from '../store/sources.js';
import type { ApiDeps } from './deps.js';

/**
 * A source write as one consistent change. The Sources row is the truth and is written first;
 * the Scheduler schedules follow it. When the schedules cannot be written (Scheduler refuses an
 * expression part-way, a throttle, a crash of the call), the row is put back as it was and the
 * schedules are reconciled back to the previous set, so a refused request leaves both as they
 * were. A request that dies between the two steps leaves a row whose schedules lag behind it;
 * repeating the request converges (schedule names are deterministic), and a schedule that fires
 * for a source that is gone is skipped by the start-run target.
 */

/** What {@link writeSource} stored. */
export interface SourceWrite {
  readonly source: SourceRecord;
  readonly created: boolean;
}

/**
 * Creates or replaces a source and its schedules; on a schedule failure, restores both and
 * rethrows the failure.
 *
 * @example
 * const { source, created } = await writeSource(deps, definition, deps.clock.now());
 */
export async function writeSource(
  deps: ApiDeps,
  definition: SourceDefinition,
  now: number,
): Promise<SourceWrite> {
  const { source, created, previous } = await deps.sources.put(definition, now);
  try {
    // A paused source stays paused through a reconfiguration: its schedules are written DISABLED.
    await deps.schedules.reconcile(definition.sourceId, definition.schedules, {
      paused: source.pausedAt !== null,
    });
  } catch (error) {
    await rollBack(deps, source, previous);
    throw error;
  }
  return { source, created };
}

/**
 * Changes only a source's schedules (the connector config stays as it is), with the same
 * row-first order and rollback as {@link writeSource}.
 */
export async function writeSchedules(
  deps: ApiDeps,
  sourceId: string,
  schedules: SourceSchedule[],
  now: number,
): Promise<SourceRecord> {
  const current = await deps.sources.require(sourceId);
  const { source } = await writeSource(
    deps,
    {
      sourceId,
      connector: current.connector,
      config: current.config,
      schedules,
      configHash: current.configHash,
      // The config is unchanged, so is its MAC (never re-signed here: the API signs only what it checked).
      ...(current.configMac ? { configMac: current.configMac } : {}),
    },
    now,
  );
  return source;
}

async function rollBack(deps: ApiDeps, written: SourceRecord, previous: SourceRecord | undefined) {
  const context = { sourceId: written.sourceId };
  try {
    const restored = await deps.sources.restore(written, previous);
    if (!restored) deps.logger.warn('source rollback skipped: the source changed concurrently', context);
    await deps.schedules.reconcile(written.sourceId, previous?.schedules ?? [], {
      paused: (previous?.pausedAt ?? null) !== null,
    });
  } catch (error) {
    // The request still fails with its own error; repeating it converges on one state.
    deps.logger.error('source rollback failed; repeat the request to converge', {
      ...context,
      error: error instanceof Error ? { name: error.name, message: error.message } : String(error),
    });
  }
}

/**
 * Pauses or resumes a source's schedules: the flag on the Sources row first (so any later write
 * keeps the state), then every Scheduler schedule DISABLED or ENABLED. If Scheduler fails, the
 * flag is put back and the failure rethrown; repeating the request converges.
 */
export async function setSourcePaused(
  deps: ApiDeps,
  sourceId: string,
  paused: boolean,
): Promise<SourceRecord> {
  const before = await deps.sources.require(sourceId);
  const source = await deps.sources.setPaused(
    sourceId,
    paused ? (before.pausedAt ?? deps.clock.now()) : null,
  );
  try {
    await deps.schedules.reconcile(sourceId, source.schedules, { paused });
  } catch (error) {
    await deps.sources.setPaused(sourceId, before.pausedAt).catch(() => undefined);
    throw error;
  }
  return source;
}
