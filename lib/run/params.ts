import type { DeadLetterFilter } from './dead-letter-filter.js';
import type { SyncRun } from './model.js';

/** The parameters a run records at its start, which stay fixed for its whole life. */
export interface RunParams extends Record<string, unknown> {
  /** Incremental runs: the source watermark when the run started, moved back by the lookback. */
  readonly since: string | null;
  /** Incremental runs: the source watermark when the run started (the run's watermark never goes below it). */
  readonly watermark?: string | null;
  /** Hash of the stream `since` was chosen for: a restart that adopts another stream drops `since`. */
  readonly stream?: string;
  readonly scope: unknown;
  /** The source's config hash at start: a resume compares it (`params_changed`). */
  readonly configHash: string;
  /**
   * The connector and its parsed config, fixed for the run's life: a source reconfigured while
   * the run is alive does not change a stream half-way; the reaper adopts a new config only
   * when it restarts the run from scratch (`params_changed`).
   */
  readonly connector?: string;
  readonly config?: Record<string, unknown>;
  /**
   * The API's MAC over the source id, connector and `config` as the source row holds them
   * (lib/engine/sources/config-trust.ts): the worker resolves no secret for a snapshot whose MAC fails.
   */
  readonly configMac?: string;
  /** `dlq_retry` runs: only dead letters that failed first at or before this time are in scope. */
  readonly deadLettersBefore?: number;
  /** `dlq_retry` runs started with a filter: only the open entries matching it are retried. */
  readonly deadLetterFilter?: DeadLetterFilter;
  /** Most partitions the run may be split into, when the start asked for a bound. */
  readonly partitions?: number;
}

/**
 * A run's params as the model reads them. Only the start (`startRun` in the engine) writes them,
 * and a restart that adopts a reconfigured source rewrites them from the same fields; the store
 * keeps them as an open record, and this is the one place that reads that record as
 * {@link RunParams}. Fields added since a run started are absent from its record, which is why
 * all but the first ones are optional.
 */
export function runParams(run: Pick<SyncRun, 'params'>): RunParams {
  return run.params as RunParams;
}
