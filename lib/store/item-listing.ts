import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { INDEX } from '../resources/definitions.js';
import type { StoredItem } from './items.js';
import { batchGetAll, InvalidCursorError } from './paging.js';

/**
 * Reading a source's items page by page, for the items API, the CLI and exports. Two orders:
 *
 * - **by entity id** (the table's own key): a stable order no write moves an entity in, so a
 *   listing taken while a run writes meets every entity that existed when it began exactly once;
 * - **by change** (`changedSince`, the `byChange` index on `sourceId` + `changedAt`): entities
 *   that changed or were tombstoned at or after a time, oldest change first — a change feed. The
 *   index projects keys only (it is written only when `changedAt` moves); each page's items are
 *   then read from the table with one consistent BatchGetItem.
 *
 * Why a change-feed poll misses no write, and what it may repeat, is in docs/items.md.
 */

/** One page of items and the cursor of the next (absent at the end). */
export interface ItemPage {
  readonly items: StoredItem[];
  readonly cursor: string | undefined;
  /**
   * A change listing only: when its first page was read (epoch ms, carried in the cursor), from
   * which the consumer's next poll should start, less a safety lag (docs/items.md).
   */
  readonly pollStart?: number;
}

/** Options of {@link ItemListing.list}. */
export interface ListItemsOptions {
  readonly limit: number;
  readonly cursor?: string | undefined;
  /** List entities changed or tombstoned at or after this time (epoch ms), oldest change first. */
  readonly changedSince?: number | undefined;
  /** Include tombstoned entities. */
  readonly includeTombstoned: boolean;
  /** The time now (epoch ms): the start of a change listing's poll when it has no cursor yet. */
  readonly now?: number;
}

// A cursor says where the last page stopped: the last key read, in the listing's order.
const IdCursor = (value: Record<string, unknown>) =>
  typeof value.e === 'string' && Object.keys(value).length === 1;
const ChangeCursor = (value: Record<string, unknown>) =>
  typeof value.e === 'string' &&
  typeof value.c === 'number' &&
  typeof value.p === 'number' &&
  Object.keys(value).length === 3;

function encode(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decode(cursor: string, valid: (value: Record<string, unknown>) => boolean): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      valid(value as Record<string, unknown>)
    )
      return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new InvalidCursorError('the pagination cursor is not valid for this listing');
}

/** Most rounds one page may read while skipping tombstoned entities: bounds a request's time. */
const MAX_ROUNDS = 20;

/** Reads pages of a source's items. */
export class ItemListing {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** A page of items in entity-id order, or in change order with `changedSince`. */
  async list(sourceId: string, options: ListItemsOptions): Promise<ItemPage> {
    return options.changedSince === undefined
      ? this.byId(sourceId, options)
      : this.byChange(sourceId, options.changedSince, options);
  }

  private async byId(sourceId: string, options: ListItemsOptions): Promise<ItemPage> {
    let after = options.cursor === undefined ? undefined : (decode(options.cursor, IdCursor).e as string);
    const items: StoredItem[] = [];
    for (let round = 0; round < MAX_ROUNDS && items.length < options.limit; round++) {
      const { Items = [], LastEvaluatedKey } = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'sourceId = :sourceId',
          ExpressionAttributeValues: { ':sourceId': sourceId },
          ConsistentRead: true,
          Limit: options.limit - items.length,
          ...(after === undefined ? {} : { ExclusiveStartKey: { sourceId, entityId: after } }),
        }),
      );
      for (const item of Items as StoredItem[])
        if (options.includeTombstoned || item.tombstonedAt === undefined) items.push(item);
      if (!LastEvaluatedKey) return { items, cursor: undefined };
      after = LastEvaluatedKey.entityId as string;
    }
    return { items, cursor: after === undefined ? undefined : encode({ e: after }) };
  }

  private async byChange(sourceId: string, since: number, options: ListItemsOptions): Promise<ItemPage> {
    const start = options.cursor === undefined ? undefined : decode(options.cursor, ChangeCursor);
    const pollStart = start ? (start.p as number) : (options.now ?? Date.now());
    let after = start ? { sourceId, entityId: start.e as string, changedAt: start.c as number } : undefined;
    const items: StoredItem[] = [];
    for (let round = 0; round < MAX_ROUNDS && items.length < options.limit; round++) {
      const { Items = [], LastEvaluatedKey } = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: INDEX.itemsByChange,
          KeyConditionExpression: 'sourceId = :sourceId AND changedAt >= :since',
          ExpressionAttributeValues: { ':sourceId': sourceId, ':since': since },
          Limit: options.limit - items.length,
          ...(after === undefined ? {} : { ExclusiveStartKey: after }),
        }),
      );
      const keys = Items.map((item) => item.entityId as string);
      for (const item of await this.getAll(sourceId, keys))
        if (options.includeTombstoned || item.tombstonedAt === undefined) items.push(item);
      if (!LastEvaluatedKey) return { items, cursor: undefined, pollStart };
      after = {
        sourceId,
        entityId: LastEvaluatedKey.entityId as string,
        changedAt: LastEvaluatedKey.changedAt as number,
      };
    }
    return {
      items,
      cursor:
        after === undefined ? undefined : encode({ e: after.entityId, c: after.changedAt, p: pollStart }),
      pollStart,
    };
  }

  /**
   * The items of `entityIds`, in that order (one consistent BatchGetItem of ≤ 100 keys; unprocessed
   * keys asked again). An entity that changed again since the index row was read is returned as
   * it is now: newer, never older.
   */
  private async getAll(sourceId: string, entityIds: readonly string[]): Promise<StoredItem[]> {
    if (entityIds.length === 0) return [];
    const keys = entityIds.map((entityId) => ({ sourceId, entityId }));
    const found = new Map(
      (await batchGetAll<StoredItem>(this.doc, this.tableName, keys)).map((item) => [item.entityId, item]),
    );
    return entityIds.flatMap((id) => {
      const item = found.get(id);
      return item ? [item] : [];
    });
  }
}
