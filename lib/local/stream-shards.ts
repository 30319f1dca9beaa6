/**
 * The local change feed's bookkeeping of a DynamoDB stream's shards: which shards to read, in
 * which order, and where to take a new iterator when one is lost. Pure (no SDK, no clock), so the
 * rules DynamoDB Streams imposes are tested without a stream that splits.
 *
 * - A stream's shards change: DynamoDB closes a shard and opens children (on a split, or about
 *   every four hours), and a closed shard ends with a null next iterator. A re-listing adds the
 *   shards not seen before; a closed shard stays known, so a re-listing that still shows it (a
 *   stream lists closed shards for 24 h) never reads it again.
 * - One item's writes are ordered only within its shard's lineage: a child is read only once its
 *   parent (when this book knows it) is closed.
 * - An iterator expires 15 minutes after it was issued (`ExpiredIteratorException`): the shard
 *   resumes after the last record it delivered, or where it started if it delivered none.
 * - Records older than 24 h are trimmed (`TrimmedDataAccessException`): what the iterator pointed
 *   at is gone, so the shard resumes at the oldest record left (`TRIM_HORIZON`).
 */

/** Where an iterator is taken: the DynamoDB Streams `ShardIteratorType` and its sequence number. */
export type ShardPosition =
  | { readonly type: 'LATEST' | 'TRIM_HORIZON' }
  | { readonly type: 'AFTER_SEQUENCE_NUMBER'; readonly sequenceNumber: string };

/** A shard as DescribeStream lists it. */
export interface ListedShard {
  readonly shardId: string;
  readonly parentShardId?: string | undefined;
}

/** Why a shard's iterator is no longer usable. */
export type IteratorLoss = 'expired' | 'trimmed';

/** A shard to read now: its iterator, or where to take one. */
export interface ReadableShard {
  readonly shardId: string;
  readonly iterator: string | undefined;
  readonly position: ShardPosition;
}

interface OpenShard {
  readonly parentShardId: string | undefined;
  iterator: string | undefined;
  position: ShardPosition;
}

/** The open and closed shards of one stream, as the poller has read them. */
export class ShardBook {
  private readonly open = new Map<string, OpenShard>();
  private readonly closed = new Set<string>();

  /**
   * Adds the listed shards this book does not know yet, to be read from `start`: `LATEST` for the
   * shards of the first listing (the feed publishes what happens after it starts), `TRIM_HORIZON`
   * for shards that appeared since (everything in them is new). Returns the ids added.
   */
  discover(shards: readonly ListedShard[], start: 'LATEST' | 'TRIM_HORIZON'): string[] {
    const added: string[] = [];
    for (const { shardId, parentShardId } of shards) {
      if (this.open.has(shardId) || this.closed.has(shardId)) continue;
      this.open.set(shardId, { parentShardId, iterator: undefined, position: { type: start } });
      added.push(shardId);
    }
    return added;
  }

  /** The open shards whose parent, if this book knows it, is closed: the ones to read now. */
  readable(): ReadableShard[] {
    return [...this.open]
      .filter(([, shard]) => shard.parentShardId === undefined || !this.open.has(shard.parentShardId))
      .map(([shardId, { iterator, position }]) => ({ shardId, iterator, position }));
  }

  /** Records the iterator just taken for a shard. */
  issued(shardId: string, iterator: string): void {
    const shard = this.open.get(shardId);
    if (shard) shard.iterator = iterator;
  }

  /**
   * Records a read: the next iterator (null: the shard is closed and fully read) and the sequence
   * number of the last record delivered, if the read returned any.
   */
  advance(shardId: string, next: string | null, lastSequenceNumber?: string): void {
    const shard = this.open.get(shardId);
    if (!shard) return;
    if (next === null) {
      this.open.delete(shardId);
      this.closed.add(shardId);
      return;
    }
    shard.iterator = next;
    if (lastSequenceNumber !== undefined)
      shard.position = { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: lastSequenceNumber };
  }

  /** Drops a shard's iterator; its next one is taken where {@link IteratorLoss} says. */
  lost(shardId: string, why: IteratorLoss): void {
    const shard = this.open.get(shardId);
    if (!shard) return;
    shard.iterator = undefined;
    // Expired: the position already says "after the last record delivered" (or the start).
    if (why === 'trimmed') shard.position = { type: 'TRIM_HORIZON' };
  }

  /** Whether the shard was read to its end. */
  isClosed(shardId: string): boolean {
    return this.closed.has(shardId);
  }
}
