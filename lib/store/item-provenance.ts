/**
 * Where a stored version of an entity came from. Written by the same UpdateItem that stores the
 * version (no extra request), so a row can always say which run, page and source request produced it.
 */
export interface ItemProvenance {
  /** The run that wrote this version. */
  readonly runId: string;
  /** The run's mode (`full`, `incremental`, `reconciliation`, `dlq_retry`). */
  readonly mode: string;
  /** The page of the run's chain that delivered it (a retry-failed run: its own page). */
  readonly page: number;
  /** The partition window the page belongs to, for a partitioned run; null otherwise. */
  readonly window: { readonly from: string | null; readonly until: string | null } | null;
  /** When the source answered the request (epoch ms). */
  readonly fetchedAt: number;
  /**
   * The source request that returned the record, its credential-shaped parameters redacted
   * (lib/connectors/redact-url.ts); null for sources reached through an SDK (S3) rather than HTTP.
   */
  readonly request: string | null;
}

/** What an item's latest write did. The change feed publishes `changed` and `tombstoned` only. */
export const LAST_WRITE = {
  /** Stored for the first time, or new content (a newer version, or new data at the same version). */
  changed: 'changed',
  /** The same content read again: bookkeeping only (the run that last saw it, the writer). */
  unchanged: 'unchanged',
  /** A reconciliation run marked it seen without rewriting it. */
  seen: 'seen',
  /** A reconciliation run confirmed it gone at the source. */
  tombstoned: 'tombstoned',
} as const;

/** One of {@link LAST_WRITE}. */
export type LastWrite = (typeof LAST_WRITE)[keyof typeof LAST_WRITE];
