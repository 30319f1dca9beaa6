import type { Entity } from '../connectors/contract.js';
import { stableHash } from '../run/hash.js';
import type { ItemProvenance, LastWrite } from './item-provenance.js';
import type { StoredState } from './item-states.js';

/*
 * What a stored entity is and what loading one answers, apart from the repository that writes it
 * (items.ts): the row, the writer's order, a load's result, and the hash that tells a changed
 * re-read from an unchanged one.
 */

/** A stored entity. */
export interface StoredItem {
  readonly sourceId: string;
  readonly entityId: string;
  readonly version: string;
  readonly data: Record<string, unknown>;
  readonly runId: string;
  readonly syncedAt: number;
  readonly lastSeenRunId?: string;
  readonly tombstonedAt?: number;
  /** The reconciliation run that confirmed the entity gone. */
  readonly tombstonedBy?: string;
  /** {@link writerKey} of the worker that wrote this version. */
  readonly writer?: string;
  /**
   * When the entity last changed (stored for the first time, new content) or was tombstoned, epoch
   * ms, stamped at the write: the sort key of the change-feed index. Absent on rows no write has
   * changed since the attribute was introduced.
   */
  readonly changedAt?: number;
  /** The run whose write set {@link changedAt}. */
  readonly changedBy?: string;
  /**
   * How many changes (stores, new content, tombstones) the row has had, counted by the changing
   * write itself: each change's number is one more than the last, so it orders one entity's
   * change events. Absent on rows unchanged since the attribute was introduced.
   */
  readonly changeSeq?: number;
  /** Hash of the version and the canonical data: tells a changed re-read from an unchanged one. */
  readonly contentHash?: string;
  /** What the latest write did; the change feed publishes only `changed` and `tombstoned`. */
  readonly lastWrite?: LastWrite;
  /** The run that first stored the entity. */
  readonly firstRunId?: string;
  /** Where the stored version came from. */
  readonly provenance?: ItemProvenance;
}

/**
 * Orders writers of an equal version: the run id (a ULID, so later runs sort later), then the
 * epoch, zero-padded. A fenced worker (an older epoch of the same run) and a late worker of an
 * older run sort before the current one.
 */
export function writerKey(runId: string, epoch: number): string {
  return `${runId}#${String(epoch).padStart(8, '0')}`;
}

/** Result of loading one entity. */
export type LoadResult =
  | {
      readonly entityId: string;
      readonly status: 'written' | 'kept_newer';
      /** Written with new content (first store, newer version, or new content at an equal version). */
      readonly changed?: boolean;
    }
  /** The page's read found the same version and content stored, live: nothing was written. */
  | { readonly entityId: string; readonly status: 'unchanged' }
  | { readonly entityId: string; readonly status: 'too_large'; readonly bytes: number }
  /** DynamoDB cannot hold a value of the entity (see `storable.ts`); `reason` says which and why. */
  | { readonly entityId: string; readonly status: 'unstorable'; readonly reason: string };

/**
 * How a page loads after reading its entities' stored states first ({@link readStoredStates}):
 * `stored` is the read's answer for this entity (null: not stored); `skipUnchanged` allows leaving
 * an entity stored at the same version and content, live, unwritten.
 */
export interface ReadFirst {
  readonly stored: StoredState | null;
  readonly skipUnchanged: boolean;
}

/** Serialized size of an item as DynamoDB roughly counts it (names + values, UTF-8). */
export function approximateItemBytes(item: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(item), 'utf8');
}

/** The content hash of an entity: version and canonical data (key order never matters). */
export function contentHashOf(entity: Pick<Entity, 'version' | 'data'>): string {
  return stableHash({ version: entity.version, data: entity.data });
}
