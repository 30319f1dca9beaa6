import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { AttributeValueError } from '../aws/json-attributes.js';
import { RELIABILITY } from '../config/constants.js';
import type { Entity } from '../connectors/contract.js';
import { isConditionFailure, requestRefusal, valueRefusal } from './errors.js';
import {
  approximateItemBytes,
  contentHashOf,
  type LoadResult,
  type ReadFirst,
  type StoredItem,
  writerKey,
} from './item-model.js';
import { type ItemProvenance, LAST_WRITE, type LastWrite } from './item-provenance.js';
import { compareVersions, readStoredStates } from './item-states.js';
import { batchGetAll, queryAll } from './paging.js';
import { unstorableIdReason, unstorableReason } from './storable.js';

export {
  approximateItemBytes,
  contentHashOf,
  type LoadResult,
  type ReadFirst,
  type StoredItem,
  writerKey,
} from './item-model.js';

/** Parallel writes per page: fills a page quickly without tripping on-demand partition limits. */
export const LOAD_CONCURRENCY = 16;

/** The Items repository: idempotent, version-guarded loads. */
export class ItemStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
    /** Stamps `changedAt` at each write (not once per page), so the stamp trails the write by one request. */
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Writes an entity under the fenced-write rules:
   *
   * - a **newer** version than the stored one (or no stored item) is written, and clears a
   *   tombstone: the source changed the entity after it was found missing, so it exists;
   * - an **equal** version is written only by a writer that sorts at or after the stored one
   *   ({@link writerKey}: the same worker again — a re-processed page —, a later epoch of the
   *   same run, or a later run; versions with 1 s resolution can hide a real change, and the
   *   later reader saw the later content). So a fenced worker of an older epoch, or a late worker
   *   of an older run, cannot change what a newer one wrote. It clears a tombstone only for a run
   *   that started after the tombstone was set (`runStartedAt`): the entity was listed again
   *   (a 404 from a lagging replica, a restore from the trash that keeps `updatedAt`), and no
   *   worker of an older run can bring back what a later reconciliation found gone. New content
   *   is never written under a standing tombstone;
   * - an **older** version is refused (`kept_newer`).
   *
   * Every write is an UpdateItem on named attributes, never a whole-item put, so no write erases
   * attributes it does not own (the tombstone). Items over the size budget are not written.
   *
   * Without `read`, the three conditional writes are tried in turn (newer, equal and same content,
   * equal and new content). With the page's read of the stored state, the read picks the one write
   * to try — or none: an older version than the stored one is `kept_newer`, and an unchanged one
   * is skipped when `read.skipUnchanged` allows. The condition still judges the write the read
   * chose; when it refuses (the read was stale), the other branches are tried as without a read.
   */
  async load(
    sourceId: string,
    entity: Entity,
    runId: string,
    now: number,
    epoch = 0,
    provenance?: ItemProvenance,
    read?: ReadFirst,
    /** When the writing run started (epoch ms): an equal version then clears an older tombstone. */
    runStartedAt?: number,
  ): Promise<LoadResult> {
    const unstorable = unstorableIdReason(entity.id) ?? unstorableReason(entity.data);
    if (unstorable) return { entityId: entity.id, status: 'unstorable', reason: unstorable };
    const fields = {
      version: entity.version,
      data: entity.data,
      runId,
      syncedAt: now,
      lastSeenRunId: runId,
      writer: writerKey(runId, epoch),
      contentHash: contentHashOf(entity),
      ...(provenance ? { provenance } : {}),
    };
    const bytes = approximateItemBytes({ sourceId, entityId: entity.id, ...fields });
    if (bytes > RELIABILITY.maxItemBytes) return { entityId: entity.id, status: 'too_large', bytes };
    const names: Record<string, string> = Object.fromEntries(Object.keys(fields).map((k) => [`#${k}`, k]));
    const values: Record<string, unknown> = Object.fromEntries(
      Object.entries(fields).map(([k, v]) => [`:${k}`, v]),
    );
    const set = `SET ${Object.keys(fields)
      .map((k) => `#${k} = :${k}`)
      .join(', ')}`;
    // Provenance rides on the write: the first run, the change stamp and what the write did are
    // attributes of the same UpdateItem, never a second request.
    const change = (lastWrite: LastWrite, changed: boolean): string =>
      changed
        ? `, lastWrite = :${lastWrite}, changedAt = :changedAt, changedBy = :runId, firstRunId = if_not_exists(firstRunId, :runId)`
        : `, lastWrite = :${lastWrite}`;
    const write = async (
      update: string,
      condition: string,
      changed: boolean,
      extra: Record<string, unknown> = {},
    ): Promise<boolean> => {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { sourceId, entityId: entity.id },
            UpdateExpression: changed ? `${update}${COUNT_CHANGE}` : update,
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: {
              ...values,
              ...(changed
                ? { ':changedAt': this.clock(), ':runId': runId, ':changed': LAST_WRITE.changed, ':one': 1 }
                : {}),
              ...(changed ? {} : { ':unchanged': LAST_WRITE.unchanged }),
              ...extra,
            },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    };
    const written = (changed: boolean): LoadResult => ({ entityId: entity.id, status: 'written', changed });
    const keptNewer: LoadResult = { entityId: entity.id, status: 'kept_newer' };
    const equal = '#version = :version AND (attribute_not_exists(#writer) OR #writer <= :writer)';
    const branches = {
      newer: async () =>
        (await write(
          `${set}${change('changed', true)} REMOVE tombstonedAt, tombstonedBy`,
          'attribute_not_exists(entityId) OR #version < :version',
          true,
        )) && written(true),
      // The entity listed again at its stored version by a run younger than its tombstone: it
      // exists, with whatever content this run read. A change: the change feed reports its return.
      revive: async () =>
        runStartedAt !== undefined &&
        (await write(
          `${set}${change('changed', true)} REMOVE tombstonedAt, tombstonedBy`,
          `${equal} AND tombstonedAt < :runStartedAt`,
          true,
          { ':runStartedAt': runStartedAt },
        )) &&
        written(true),
      // An equal version is usually the same content read again (a re-read, a retried page): it
      // refreshes the bookkeeping and leaves the change stamp alone. New content under the same
      // version (a source with 1 s versions) is a change, never written under a tombstone.
      sameContent: async () =>
        (await write(
          `${set}${change('unchanged', false)}`,
          `${equal} AND #contentHash = :contentHash`,
          false,
        )) && written(false),
      newContent: async () =>
        (await write(
          `${set}${change('changed', true)}`,
          `${equal} AND attribute_not_exists(tombstonedAt) AND (attribute_not_exists(#contentHash) OR #contentHash <> :contentHash)`,
          true,
        )) && written(true),
    };
    type Branch = keyof typeof branches;
    /** Tries `first`, then the other branches in order, until one's condition holds. */
    const attempt = async (first?: Branch): Promise<LoadResult> => {
      const order: Branch[] = ['newer', 'revive', 'sameContent', 'newContent'];
      for (const branch of first ? [first, ...order.filter((b) => b !== first)] : order) {
        const result = await branches[branch]();
        if (result) return result;
      }
      return keptNewer;
    };
    if (!read) return attempt();
    const { stored } = read;
    if (!stored) return attempt('newer');
    const order = compareVersions(stored.version, entity.version);
    // Stored versions only grow, so even a stale read showing a newer one is right.
    if (order > 0) return keptNewer;
    if (order < 0) return attempt('newer');
    if (stored.tombstonedAt !== undefined && runStartedAt !== undefined && stored.tombstonedAt < runStartedAt)
      return attempt('revive');
    if (stored.contentHash !== fields.contentHash) return attempt('newContent');
    if (read.skipUnchanged && stored.tombstonedAt === undefined)
      return { entityId: entity.id, status: 'unchanged' };
    return attempt('sameContent');
  }

  /**
   * Loads a page of entities with bounded parallelism. DynamoDB refusing one entity's values (a
   * limit `storable.ts` does not foresee), or a value no attribute can hold, makes that entity
   * `unstorable`; DynamoDB refusing the request's shape rejects with `RequestRefusedError` (a
   * defect, not the record's); any other storage error rejects (the page is retried whole).
   */
  async loadAll(
    sourceId: string,
    entities: readonly Entity[],
    runId: string,
    now: number,
    epoch = 0,
    provenance?: ItemProvenance,
    /** Read the stored states first (one BatchGetItem per 100 entities) and write only what changed. */
    readFirst?: { readonly skipUnchanged: boolean },
    /** When the writing run started: see {@link ItemStore.load}. */
    runStartedAt?: number,
  ): Promise<LoadResult[]> {
    const limit = pLimit(LOAD_CONCURRENCY);
    const states = readFirst
      ? await readStoredStates(
          this.doc,
          this.tableName,
          sourceId,
          // An id DynamoDB cannot hold has no stored state, and asking for it would fail the batch.
          entities.map((e) => e.id).filter((id) => unstorableIdReason(id) === null),
        )
      : undefined;
    const readOf = (entity: Entity): ReadFirst | undefined =>
      states && readFirst
        ? { stored: states.get(entity.id) ?? null, skipUnchanged: readFirst.skipUnchanged }
        : undefined;
    return Promise.all(
      entities.map((entity) =>
        limit(() =>
          this.load(sourceId, entity, runId, now, epoch, provenance, readOf(entity), runStartedAt).catch(
            (error: unknown): LoadResult => {
              // A value the translation refuses is this record's, like a value DynamoDB refuses.
              const refusal =
                error instanceof AttributeValueError
                  ? `the record cannot be stored: ${error.message}`
                  : valueRefusal(error);
              if (refusal !== null) return { entityId: entity.id, status: 'unstorable', reason: refusal };
              throw requestRefusal(error, { sourceId, entityId: entity.id }) ?? error;
            },
          ),
        ),
      ),
    );
  }

  /**
   * Marks a stored entity as seen by a reconciliation run without rewriting it (an invalid
   * record that still exists at the source, a stored version newer than the listing's).
   * Unknown entities are left alone.
   */
  async markSeen(sourceId: string, entityId: string, runId: string): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId, entityId },
          UpdateExpression: 'SET lastSeenRunId = :runId, lastWrite = :seen',
          ConditionExpression: 'attribute_exists(entityId)',
          ExpressionAttributeValues: { ':runId': runId, ':seen': LAST_WRITE.seen },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async get(sourceId: string, entityId: string): Promise<StoredItem | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { sourceId, entityId }, ConsistentRead: true }),
    );
    return Item as StoredItem | undefined;
  }

  /**
   * Id and version of the stored items among `entityIds` (BatchGetItem, 100 keys a request,
   * unprocessed keys retried, only the key and version projected). Cheaper than a full listing
   * when the caller knows the ids, as a verifier does.
   */
  async getVersions(
    sourceId: string,
    entityIds: readonly string[],
  ): Promise<Pick<StoredItem, 'entityId' | 'version'>[]> {
    const keys = entityIds.map((entityId) => ({ sourceId, entityId }));
    return batchGetAll<Pick<StoredItem, 'entityId' | 'version'>>(this.doc, this.tableName, keys, {
      expression: 'entityId, #version',
      names: { '#version': 'version' },
    });
  }

  /** Every item of a source (verification, reconciliation). */
  async listAll(sourceId: string): Promise<StoredItem[]> {
    const items = await queryAll(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: 'sourceId = :sourceId',
      ExpressionAttributeValues: { ':sourceId': sourceId },
      ConsistentRead: true,
    });
    return items as unknown as StoredItem[];
  }

  /**
   * One slice of a source's stored items for the tombstone pass: keys and the reconciliation
   * marks only (never the data), in key order after `afterEntityId`, at most `limit`. `next` is the
   * last key read when more may follow, so a pass over millions of items goes slice by slice.
   */
  async keySlice(
    sourceId: string,
    afterEntityId: string | null,
    limit: number,
  ): Promise<{
    items: Pick<StoredItem, 'entityId' | 'lastSeenRunId' | 'tombstonedAt'>[];
    next: string | null;
  }> {
    const { Items = [], LastEvaluatedKey } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'sourceId = :sourceId',
        ExpressionAttributeValues: { ':sourceId': sourceId },
        ProjectionExpression: 'entityId, lastSeenRunId, tombstonedAt',
        ConsistentRead: true,
        Limit: limit,
        ...(afterEntityId === null ? {} : { ExclusiveStartKey: { sourceId, entityId: afterEntityId } }),
      }),
    );
    const items = Items as Pick<StoredItem, 'entityId' | 'lastSeenRunId' | 'tombstonedAt'>[];
    return { items, next: LastEvaluatedKey ? (LastEvaluatedKey.entityId as string) : null };
  }

  /**
   * Tombstones one item the reconciliation run `runId` did not see, conditional on it still being
   * unseen by that run and live, so an entity loaded meanwhile is never tombstoned. Returns
   * whether it was.
   */
  async tombstone(sourceId: string, entityId: string, runId: string, now: number): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId, entityId },
          UpdateExpression: TOMBSTONE_UPDATE,
          ConditionExpression:
            'attribute_exists(entityId) AND (attribute_not_exists(lastSeenRunId) OR lastSeenRunId <> :runId) AND attribute_not_exists(tombstonedAt)',
          ExpressionAttributeValues: this.tombstoneValues(now, runId),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** A tombstone is a change: it moves the change stamp, so the change feed reports it. */
  private tombstoneValues(now: number, runId: string): Record<string, unknown> {
    return {
      ':now': now,
      ':runId': runId,
      ':changedAt': this.clock(),
      ':tombstoned': LAST_WRITE.tombstoned,
      ':one': 1,
    };
  }
}

/**
 * Counts every change of a row (a store, new content, a tombstone) in `changeSeq`. The ADD is atomic
 * within the conditional write that makes the change, so each change gets the next number: the
 * per-entity order the change feed's events carry (`changeSequence`), which neither `changedAt`
 * (writers' clocks) nor `version` (a tombstone keeps it) can give. `load` adds it to every change.
 */
const COUNT_CHANGE = ' ADD changeSeq :one';

const TOMBSTONE_UPDATE = `SET tombstonedAt = :now, tombstonedBy = :runId, changedAt = :changedAt, changedBy = :runId, lastWrite = :tombstoned${COUNT_CHANGE}`;
