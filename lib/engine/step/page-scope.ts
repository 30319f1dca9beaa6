import type { TimeWindow } from '../../connectors/contract.js';
import type { SyncRun } from '../../run/model.js';
import { runParams } from '../../run/params.js';
import type { PageScope } from '../../store/dead-letters.js';

/**
 * What a failed page needs to be fetched again exactly as it failed: the mode, the
 * `since` the run listed with, and the connector config it ran with. A `dlq_retry` run files no
 * source pages of its own, so it records none.
 *
 * @param since - the `since` the page was fetched with (the step's effective one when known).
 */
export function pageScope(run: SyncRun, since?: string | null, window?: TimeWindow): PageScope {
  const params = runParams(run);
  return {
    mode: run.mode,
    since: since === undefined ? (params.since ?? null) : since,
    ...(params.connector ? { connector: params.connector } : {}),
    ...(params.config ? { config: params.config } : {}),
    ...(params.config && params.configMac ? { configMac: params.configMac } : {}),
    // A partition's page is fetched again within its window.
    ...(window ? { window } : {}),
  };
}

const WINDOW_REF = 'window:';

/**
 * The ref a failed page is filed under: its cursor; the first page of a stream has none, so it
 * is the empty string — or, for a partition's first page, its window (each partition's first page
 * is its own entry, not one shared by all partitions).
 */
export function pageRef(cursor: string | null, window?: TimeWindow): string {
  if (cursor !== null) return cursor;
  return window ? `${WINDOW_REF}${window.from ?? ''}..${window.until ?? ''}` : '';
}

/** The cursor a filed page ref stands for: null for a stream's (or a window's) first page. */
export function cursorOfRef(ref: string): string | null {
  return ref === '' || ref.startsWith(WINDOW_REF) ? null : ref;
}
