import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { RunMode } from '../run/model.js';
import { isConditionFailure, LockNotHeldError, SourceBusyError, SourceNotFoundError } from './errors.js';
import { decodeCursor, encodeCursor, type Page } from './paging.js';
import { ScheduleFirings } from './schedule-firings.js';
import { BINDING_KEY_PREFIX } from './secret-bindings.js';

/** A recurring schedule that starts runs of a source. */
export interface SourceSchedule {
  /** An EventBridge Scheduler expression: `rate(1 hour)`, `cron(0 3 * * ? *)`. */
  readonly expression: string;
  readonly mode: RunMode;
}

/** A configured source. Secrets are references (SSM / Secrets Manager names), never values. */
export interface SourceRecord {
  readonly sourceId: string;
  readonly connector: string;
  readonly config: Record<string, unknown>;
  readonly schedules: SourceSchedule[];
  /** Hash of connector + config: a run compares it to detect a reconfiguration (`params_changed`). */
  readonly configHash: string;
  /** The API's MAC over source id, connector and config (lib/engine/sources/config-trust.ts); null when unsigned. */
  readonly configMac: string | null;
  /**
   * Committed watermark: every entity modified before it has been stored. Moves only when an
   * incremental (or keyed full) run succeeds. Belongs to {@link SourceRecord.watermarkStream}.
   */
  readonly watermark: string | null;
  /**
   * Hash of the stream the watermark was read from (connector + the config fields that select
   * the stream): a run whose config selects another stream ignores the watermark. Null for
   * watermarks written before streams were recorded, which no run trusts.
   */
  readonly watermarkStream: string | null;
  /** The one active run (the per-source lock), if any. */
  readonly activeRunId: string | null;
  /**
   * When an administrator paused the source's schedules (their Scheduler schedules are then
   * DISABLED, and kept so by every later write); null while they fire.
   */
  readonly pausedAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A watermark and the stream it was read from. */
export interface SourceWatermark {
  readonly value: string;
  readonly stream: string;
}

/** What an administrator sets on a source. */
export interface SourceDefinition {
  readonly sourceId: string;
  readonly connector: string;
  readonly config: Record<string, unknown>;
  readonly schedules: SourceSchedule[];
  readonly configHash: string;
  /** The API's MAC over the definition's source id, connector and config. */
  readonly configMac?: string;
}

function toSource(item: Record<string, unknown>): SourceRecord {
  return {
    sourceId: item.sourceId as string,
    connector: item.connector as string,
    config: (item.config ?? {}) as Record<string, unknown>,
    schedules: (item.schedules ?? []) as SourceSchedule[],
    configHash: item.configHash as string,
    configMac: typeof item.configMac === 'string' ? item.configMac : null,
    watermark: (item.watermark ?? null) as string | null,
    watermarkStream: (item.watermarkStream ?? null) as string | null,
    activeRunId: (item.activeRunId ?? null) as string | null,
    pausedAt: typeof item.pausedAt === 'number' ? item.pausedAt : null,
    createdAt: item.createdAt as number,
    updatedAt: item.updatedAt as number,
  };
}

/** The Sources repository, including the one-active-run-per-source lock. */
export class SourceStore {
  /** When each of the sources' schedules last fired (duplicate deliveries are dropped against it). */
  readonly firings: ScheduleFirings;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {
    this.firings = new ScheduleFirings(doc, tableName);
  }

  /**
   * Creates or reconfigures a source. Only the definition's attributes are set, so the watermark
   * and the lock survive a reconfiguration. Returns the stored source and whether it was new.
   */
  async put(
    definition: SourceDefinition,
    now: number,
  ): Promise<{ source: SourceRecord; created: boolean; previous: SourceRecord | undefined }> {
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { sourceId: definition.sourceId },
        UpdateExpression: `SET connector = :connector, config = :config, schedules = :schedules, configHash = :hash, updatedAt = :now, createdAt = if_not_exists(createdAt, :now)${definition.configMac ? ', configMac = :mac' : ' REMOVE configMac'}`,
        ExpressionAttributeValues: {
          ':connector': definition.connector,
          ':config': definition.config,
          ':schedules': definition.schedules,
          ':hash': definition.configHash,
          ':now': now,
          ...(definition.configMac ? { ':mac': definition.configMac } : {}),
        },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const source = toSource({
      ...Attributes,
      ...definition,
      configMac: definition.configMac ?? null,
      updatedAt: now,
      createdAt: Attributes?.createdAt ?? now,
    });
    return {
      source,
      created: Attributes === undefined,
      previous: Attributes ? toSource(Attributes) : undefined,
    };
  }

  /**
   * Undoes a {@link put} whose follow-up failed: puts the previous definition back, or deletes a
   * source the put created. Conditional on the row still being the one that put wrote (same
   * `updatedAt` and hash) and, for a delete, on no run holding it, so a concurrent write or a run
   * started in between is never undone. Returns false when the row had moved on.
   */
  async restore(written: SourceRecord, previous: SourceRecord | undefined): Promise<boolean> {
    const unchanged = {
      ConditionExpression: 'updatedAt = :written AND configHash = :writtenHash',
      ExpressionAttributeValues: { ':written': written.updatedAt, ':writtenHash': written.configHash },
    };
    try {
      if (!previous) {
        await this.doc.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { sourceId: written.sourceId },
            ConditionExpression: `${unchanged.ConditionExpression} AND attribute_not_exists(activeRunId)`,
            ExpressionAttributeValues: unchanged.ExpressionAttributeValues,
          }),
        );
        return true;
      }
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId: written.sourceId },
          UpdateExpression: `SET connector = :connector, config = :config, schedules = :schedules, configHash = :hash, updatedAt = :updatedAt${previous.configMac ? ', configMac = :mac' : ' REMOVE configMac'}`,
          ConditionExpression: unchanged.ConditionExpression,
          ExpressionAttributeValues: {
            ...unchanged.ExpressionAttributeValues,
            ...(previous.configMac ? { ':mac': previous.configMac } : {}),
            ':connector': previous.connector,
            ':config': previous.config,
            ':schedules': previous.schedules,
            ':hash': previous.configHash,
            ':updatedAt': previous.updatedAt,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async get(sourceId: string): Promise<SourceRecord | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { sourceId }, ConsistentRead: true }),
    );
    return Item ? toSource(Item) : undefined;
  }

  async require(sourceId: string): Promise<SourceRecord> {
    const source = await this.get(sourceId);
    if (!source) throw new SourceNotFoundError(`source ${sourceId} not found`, { sourceId });
    return source;
  }

  /**
   * Sources a page at a time (a scan: the table holds configuration, not data). The table's
   * secret-binding records are not sources and are left out (a page may then hold fewer).
   */
  async list(options: { limit?: number; cursor?: string } = {}): Promise<Page<SourceRecord>> {
    const { Items = [], LastEvaluatedKey } = await this.doc.send(
      new ScanCommand({
        TableName: this.tableName,
        Limit: options.limit ?? 50,
        ExclusiveStartKey: decodeCursor(options.cursor),
        FilterExpression: 'NOT begins_with(sourceId, :binding)',
        ExpressionAttributeValues: { ':binding': BINDING_KEY_PREFIX },
      }),
    );
    return { items: Items.map(toSource), cursor: encodeCursor(LastEvaluatedKey) };
  }

  /**
   * Pauses (`pausedAt` a time) or resumes (null) the source's schedules, conditional on the source
   * existing; answers the source as it now is. Only the flag moves: the config, its hash and the
   * schedules stay, so a resumed source's interrupted runs still resume.
   */
  async setPaused(sourceId: string, pausedAt: number | null): Promise<SourceRecord> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId },
          UpdateExpression: pausedAt === null ? 'REMOVE pausedAt' : 'SET pausedAt = :at',
          ConditionExpression: 'attribute_exists(sourceId)',
          ...(pausedAt === null ? {} : { ExpressionAttributeValues: { ':at': pausedAt } }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toSource(Attributes ?? {});
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new SourceNotFoundError(`source ${sourceId} not found`, { sourceId }, { cause: error });
    }
  }

  /** Deletes a source; refused with {@link SourceBusyError} while it has an active run. */
  async delete(sourceId: string): Promise<SourceRecord> {
    try {
      const { Attributes } = await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { sourceId },
          ConditionExpression: 'attribute_exists(sourceId) AND attribute_not_exists(activeRunId)',
          ReturnValues: 'ALL_OLD',
        }),
      );
      return toSource(Attributes ?? {});
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw await this.explainLockRefusal(sourceId, error);
    }
  }

  /** Takes the source's lock for `runId`; a held lock fails with {@link SourceBusyError} naming its holder. */
  async acquireLock(sourceId: string, runId: string, now: number): Promise<void> {
    try {
      await this.doc.send(new UpdateCommand(SourceStore.acquireUpdate(this.tableName, sourceId, runId, now)));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw await this.explainLockRefusal(sourceId, error);
    }
  }

  /** The lock update, shared with the create-run transaction. */
  static acquireUpdate(tableName: string, sourceId: string, runId: string, now: number) {
    return {
      TableName: tableName,
      Key: { sourceId },
      UpdateExpression: 'SET activeRunId = :runId, lockedAt = :now',
      ConditionExpression: 'attribute_exists(sourceId) AND attribute_not_exists(activeRunId)',
      ExpressionAttributeValues: { ':runId': runId, ':now': now },
    };
  }

  /** Releases the lock; only its holder may ({@link LockNotHeldError} otherwise). */
  async releaseLock(sourceId: string, runId: string, watermark?: SourceWatermark): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand(SourceStore.releaseUpdate(this.tableName, sourceId, runId, watermark)),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const source = await this.get(sourceId);
      throw new LockNotHeldError(`run ${runId} does not hold the lock of source ${sourceId}`, {
        sourceId,
        runId,
        holder: source?.activeRunId ?? null,
      });
    }
  }

  /**
   * The release update (optionally committing a new watermark with the stream it belongs to),
   * shared with the finish transaction.
   */
  static releaseUpdate(tableName: string, sourceId: string, runId: string, watermark?: SourceWatermark) {
    return {
      TableName: tableName,
      Key: { sourceId },
      UpdateExpression: `REMOVE activeRunId, lockedAt${watermark === undefined ? '' : ' SET watermark = :watermark, watermarkStream = :stream'}`,
      ConditionExpression: 'activeRunId = :runId',
      ExpressionAttributeValues: {
        ':runId': runId,
        ...(watermark === undefined ? {} : { ':watermark': watermark.value, ':stream': watermark.stream }),
      },
    };
  }

  /** Names why a lock condition failed: the source is missing, or busy with a named run. */
  async explainLockRefusal(sourceId: string, cause?: unknown): Promise<Error> {
    const source = await this.get(sourceId);
    if (!source) return new SourceNotFoundError(`source ${sourceId} not found`, { sourceId }, { cause });
    if (source.activeRunId) return new SourceBusyError(sourceId, source.activeRunId);
    return new LockNotHeldError(
      `the lock of source ${sourceId} changed concurrently`,
      { sourceId },
      { cause },
    );
  }
}
