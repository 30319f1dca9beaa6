import type { SyncRun } from '../run/model.js';
import type { PageScope } from '../store/dead-letters.js';
import type { RunParams } from './start-run.js';

/**
 * What a failed page needs to be fetched again exactly as it failed (DESIGN §6): the mode, the
 * `since` the run listed with, and the connector config it ran with. A `dlq_retry` run files no
 * source pages of its own, so it records none.
 *
 * @param since - the `since` the page was fetched with (the step's effective one when known).
 */
export function pageScope(run: SyncRun, since?: string | null): PageScope {
  const params = run.params as Partial<RunParams>;
  return {
    mode: run.mode,
    since: since === undefined ? (params.since ?? null) : since,
    ...(params.connector ? { connector: params.connector } : {}),
    ...(params.config ? { config: params.config } : {}),
  };
}
