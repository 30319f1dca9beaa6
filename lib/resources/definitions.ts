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
}

export interface TableDefinition {
  /** Which entry of {@link ResourceNames} holds the table's name. */
  readonly nameKey: 'syncRunsTable' | 'sourcesTable' | 'deadLettersTable' | 'itemsTable';
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
} as const;

/** The one value of `activeShard`: the active set is small, one partition is enough. */
export const ACTIVE_SHARD = 'active';

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
    indexes: [],
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
