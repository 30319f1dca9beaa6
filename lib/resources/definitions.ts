import {
  PAGE_DLQ_RETENTION_SECONDS,
  PAGE_QUEUE_VISIBILITY_SECONDS,
  RELIABILITY,
} from '../config/constants.js';
import type { ResourceNames } from '../config/env.js';

/**
 * Table keys, indexes and queue attributes, declared once. The local bootstrap creates
 * resources from these and the CDK stack provisions the same shapes, so the emulator and AWS
 * cannot drift apart.
 */
export type KeyType = 'S' | 'N';

export interface KeyAttribute {
  readonly name: string;
  readonly type: KeyType;
}

export interface IndexDefinition {
  readonly indexName: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /**
   * What the index copies of each item. `ALL` (default) answers a query from the index alone;
   * `KEYS_ONLY` costs an index write only when a key attribute changes, not on every write.
   */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
}

export interface TableDefinition {
  /** Which entry of {@link ResourceNames} holds the table's name. */
  readonly nameKey: 'syncRunsTable' | 'sourcesTable' | 'deadLettersTable' | 'itemsTable' | 'rateBudgetsTable';
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  readonly indexes: readonly IndexDefinition[];
  /** Attribute DynamoDB TTL reads, if any (moto stores but never expires it). */
  readonly ttlAttribute?: string;
}

/** Index names, referenced by the stores' queries. */
export const INDEX = {
  /** Runs of a source, newest first (ULIDs sort by creation time). */
  runsBySource: 'bySource',
  /**
   * Sparse index of runs that are still queued or running: only those carry `activeShard`, so
   * the reaper reads a handful of rows per tick instead of scanning history.
   */
  activeRuns: 'activeRuns',
  /** Dead letters whose last failure happened in a given run. */
  deadLettersByRun: 'byRun',
  /** A source's items by the time they last changed or were tombstoned: the change feed (docs/items.md). */
  itemsByChange: 'byChange',
} as const;

/**
 * Partitions of the active-runs index. Every heartbeat moves `heartbeatAt`, the index's sort key,
 * so every heartbeat is a write to the run's index partition: with one partition, a few hundred
 * concurrent runs would all heartbeat into one hot key. Runs are spread over this many
 * partitions by a hash of their id; the reaper queries each (16 small queries a minute).
 */
export const ACTIVE_SHARD_COUNT = 16;

/** The single partition value runs were written with before the index was sharded; still read. */
export const LEGACY_ACTIVE_SHARD = 'active';

/** The active-index partition of a run: `active#0` … `active#15`, stable for the run's life. */
export function activeShardOf(runId: string): string {
  // FNV-1a: cheap, stable across processes and runtimes, and well spread over ULIDs.
  let hash = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) {
    hash ^= runId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `active#${hash % ACTIVE_SHARD_COUNT}`;
}

/** Every partition value the reaper reads, the legacy one included. */
export const ACTIVE_SHARDS: readonly string[] = [
  ...Array.from({ length: ACTIVE_SHARD_COUNT }, (_, i) => `active#${i}`),
  LEGACY_ACTIVE_SHARD,
];

export const TABLES = {
  syncRuns: {
    nameKey: 'syncRunsTable',
    partitionKey: { name: 'runId', type: 'S' },
    indexes: [
      {
        indexName: INDEX.runsBySource,
        partitionKey: { name: 'sourceId', type: 'S' },
        sortKey: { name: 'runId', type: 'S' },
      },
      {
        indexName: INDEX.activeRuns,
        partitionKey: { name: 'activeShard', type: 'S' },
        sortKey: { name: 'heartbeatAt', type: 'N' },
      },
    ],
    // Runs never expire; the positions stored beside them (lib/store/positions.ts) do.
    ttlAttribute: 'expiresAt',
  },
  sources: {
    nameKey: 'sourcesTable',
    partitionKey: { name: 'sourceId', type: 'S' },
    indexes: [],
  },
  deadLetters: {
    nameKey: 'deadLettersTable',
    partitionKey: { name: 'sourceId', type: 'S' },
    sortKey: { name: 'entryId', type: 'S' },
    indexes: [
      {
        indexName: INDEX.deadLettersByRun,
        partitionKey: { name: 'runId', type: 'S' },
        sortKey: { name: 'entryId', type: 'S' },
      },
    ],
  },
  items: {
    nameKey: 'itemsTable',
    partitionKey: { name: 'sourceId', type: 'S' },
    sortKey: { name: 'entityId', type: 'S' },
    indexes: [
      {
        indexName: INDEX.itemsByChange,
        partitionKey: { name: 'sourceId', type: 'S' },
        sortKey: { name: 'changedAt', type: 'N' },
        // Keys only: `changedAt` moves only when the entity changes, so a re-read that rewrites
        // an unchanged entity (bookkeeping attributes) never writes the index.
        projection: 'KEYS_ONLY',
      },
    ],
  },
  /**
   * One record per credential (connector + origin + secret reference, hashed): its rate budget
   * and the leases of its requests in flight (lib/store/rate-budgets.ts). An idle record expires.
   */
  rateBudgets: {
    nameKey: 'rateBudgetsTable',
    partitionKey: { name: 'credentialId', type: 'S' },
    indexes: [],
    ttlAttribute: 'expiresAt',
  },
} as const satisfies Record<string, TableDefinition>;

/** Attributes of the page queue and its dead-letter queue. */
export interface QueueDefinition {
  readonly visibilityTimeoutSeconds: number;
  readonly messageRetentionSeconds: number;
  /** Receives before SQS moves a message to the DLQ. */
  readonly maxReceiveCount: number;
  readonly dlqRetentionSeconds: number;
}

export const PAGE_QUEUE: QueueDefinition = {
  visibilityTimeoutSeconds: PAGE_QUEUE_VISIBILITY_SECONDS,
  // Long enough to outlive the checkpoint freshness budget, so a deferred page is never lost to retention.
  messageRetentionSeconds: 4 * 24 * 60 * 60,
  maxReceiveCount: RELIABILITY.maxReceiveCount,
  dlqRetentionSeconds: PAGE_DLQ_RETENTION_SECONDS,
};

/** All table definitions with their concrete names. */
export function tablesWithNames(names: ResourceNames): { name: string; def: TableDefinition }[] {
  return Object.values(TABLES).map((def) => ({ name: names[def.nameKey], def }));
}
