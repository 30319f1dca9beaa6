import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ACTIVE_SHARDS, activeShardOf, INDEX } from '../resources/definitions.js';
import type { Completeness } from '../run/completeness.js';
import {
  FIRST_EPOCH,
  isActive,
  type ResumeRecord,
  type RunFailure,
  type RunMode,
  type RunState,
  type RunTrigger,
  type SyncRun,
} from '../run/model.js';
import { type ChainRef, chainKey, newChainItem } from './chain-item.js';
import { chainRefsOfItem, withChains } from './chain-reads.js';
import { isConditionFailure, RunExistsError, RunNotFoundError, type StoreError } from './errors.js';
import { decodeCursor, deleteAllQueried, encodeCursor, type Page, queryAll } from './paging.js';
import { type Expected, explainRefusal } from './refusals.js';
import { type Fence, fenceWrites } from './run-chains.js';
import { RunHeads } from './run-heads.js';
import { toSyncRun } from './run-item.js';
import { type RunSummary, recentRunsOf, scanRuns } from './run-listings.js';
import { transactWithRetry } from './transact-retry.js';

export type { Fence } from './run-chains.js';
export { RECENT_RUNS_READ, type RunSummary } from './run-listings.js';

/** What a new run starts with. */
export interface NewRun {
  readonly runId: string;
  readonly sourceId: string;
  readonly mode: RunMode;
  readonly params: Record<string, unknown>;
  readonly paramsHash: string;
  readonly resume: ResumeRecord;
  /** Who started it; default `api`. */
  readonly trigger?: RunTrigger;
  /** Whether the source had open item dead letters when the run started (see `SyncRun.itemDeadLetters`). */
  readonly itemDeadLetters?: boolean;
  readonly now: number;
}

/** How a run ends, as the SyncRun row records it. */
export interface RunFinish {
  /** The finishing worker's epoch; null for a decision that is not fenced by epoch. */
  readonly epoch: number | null;
  readonly state: 'succeeded' | 'failed';
  readonly failure?: RunFailure;
  readonly resume?: ResumeRecord;
  readonly now: number;
}

/** Parts of the store's update expressions shared by several intents. */
export const RUN_CONDITIONS = {
  runningAtEpoch: 'attribute_exists(runId) AND #state = :running AND epoch = :epoch',
} as const;

/**
 * The SyncRun repository: the run item — what concerns the run as a whole (mode, parameters,
 * epoch, state, verdict, the counts of its finished chains) — read together with its page chains
 * (lib/store/chains.ts). Every write is a conditional update on named attributes (never a
 * whole-item put after creation), so no write can erase what another wrote.
 */
export class SyncRunStore {
  /** The run items page steps read before their claim, and those this container keeps (see {@link RunHeads}). */
  readonly heads: RunHeads;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {
    this.heads = new RunHeads(doc, tableName);
  }

  /** Stores a new queued run (epoch 1, page 1 next). Fails with {@link RunExistsError} on a reused id. */
  async create(run: NewRun): Promise<SyncRun> {
    await transactWithRetry(this.doc, {
      items: () => SyncRunStore.newItems(this.tableName, run),
      refused: async (reasons, error) => {
        if (reasons[0] === 'ConditionalCheckFailed')
          throw new RunExistsError(`run ${run.runId} exists`, { runId: run.runId });
        throw error;
      },
    });
    return this.require(run.runId);
  }

  /** The puts a new run is stored with — its item and its own chain's, page 1 due at once — also used inside the create-and-lock transaction. */
  static newItems(tableName: string, run: NewRun) {
    const item = {
      runId: run.runId,
      sourceId: run.sourceId,
      mode: run.mode,
      trigger: run.trigger ?? 'api',
      params: run.params,
      paramsHash: run.paramsHash,
      state: 'queued',
      epoch: FIRST_EPOCH,
      progress: { processed: 0, total: null, pages: 0 },
      errorCount: 0,
      heartbeatAt: run.now,
      restarts: 0,
      resume: run.resume,
      createdAt: run.now,
      updatedAt: run.now,
      activeShard: activeShardOf(run.runId),
      ...(run.itemDeadLetters !== undefined ? { itemDeadLetters: run.itemDeadLetters } : {}),
    };
    return [
      { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(runId)' } },
      // Page 1 is due from the start; startRun confirms the send.
      { Put: { TableName: tableName, Item: newChainItem({ runId: run.runId }, 1, run.now) } },
    ];
  }

  /** The run, read strongly consistent, or undefined. */
  async get(runId: string): Promise<SyncRun | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { runId }, ConsistentRead: true }),
    );
    return Item ? (await withChains(this.doc, this.tableName, [Item]))[0] : undefined;
  }

  /** The run, or {@link RunNotFoundError}. */
  async require(runId: string): Promise<SyncRun> {
    const run = await this.get(runId);
    if (!run) throw new RunNotFoundError(`run ${runId} not found`, { runId });
    return run;
  }

  /**
   * Notes that the run filed an item dead letter, before it files it: from then on its pages look
   * for the entries their loads resolve. The flag goes on the run item and on the chain of the
   * page that files it, whose next claim tells a container that kept the run item (see
   * {@link RunHeads}). Unconditional on the epoch (a fenced worker's entry is filed all the same);
   * true is never taken back.
   */
  async markItemDeadLetters(runId: string, chain: ChainRef = { runId }): Promise<void> {
    const mark = (Key: Record<string, unknown>) =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET itemDeadLetters = :yes',
          ConditionExpression: 'attribute_exists(runId)',
          ExpressionAttributeValues: { ':yes': true },
        }),
      );
    try {
      await mark({ runId });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new RunNotFoundError(`run ${runId} not found`, { runId });
    }
    this.heads.forget(runId);
    try {
      await mark(chainKey(chain));
    } catch (error) {
      // A chain a restart from scratch deleted: the run's flag stands, and no page of it runs.
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** queued → running, by the worker that takes page 1 at the run's current epoch. */
  async start(runId: string, epoch: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        UpdateExpression: 'SET #state = :running, startedAt = :now, heartbeatAt = :now, updatedAt = :now',
        ConditionExpression: 'attribute_exists(runId) AND #state = :queued AND epoch = :epoch',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':queued': 'queued',
          ':epoch': epoch,
          ':now': now,
        },
      },
      { epoch },
    );
  }

  /**
   * Re-arms an active run under epoch + 1 and records the verdict, moving its open chains to the
   * new epoch in the same transaction: any write of the previous epoch's worker fails from now
   * on. Two reapers fencing at once: one wins, the other gets {@link RunFencedError}. Returns the
   * new epoch.
   */
  async fence(f: Fence): Promise<number> {
    // A collision with a transaction on the run or a chain (a partition committing, the run
    // ending) wrote nothing: the fence goes again, and then fences or learns it lost the race.
    await transactWithRetry(this.doc, {
      items: () => fenceWrites(this.tableName, f),
      refused: async (_reasons, error) => {
        throw await this.explainRefusal(f.runId, { epoch: f.epoch }, error);
      },
    });
    return f.epoch + 1;
  }

  /** Parts of the finish update, shared with the transaction that also releases the source lock. */
  static finishUpdate(runId: string, finish: RunFinish) {
    // A failure may end a run that never started (a crash loop on page 1), so `failed` also
    // accepts queued; success requires the running worker's epoch.
    const states =
      finish.state === 'failed'
        ? 'attribute_exists(runId) AND #state IN (:running, :queued)'
        : 'attribute_exists(runId) AND #state = :running';
    const epochCondition = finish.epoch === null ? '' : ' AND epoch = :epoch';
    return {
      Key: { runId },
      UpdateExpression:
        'SET #state = :final, finishedAt = :now, updatedAt = :now' +
        (finish.failure ? ', failure = :failure' : '') +
        (finish.resume ? ', #resume = :resume' : '') +
        // The outbox: the ended run stays in the active index, marked, until its outcome event
        // is confirmed published (clearOutbox); the reaper re-publishes it if the worker died first.
        // heartbeatAt: the reaper looks at an ended run only once it has been silent 90 s since.
        ', outboxAt = :now, heartbeatAt = :now',
      ConditionExpression: `${states}${epochCondition}`,
      ExpressionAttributeNames: {
        '#state': 'state',
        ...(finish.resume ? { '#resume': 'resume' } : {}),
      },
      ExpressionAttributeValues: {
        ':final': finish.state,
        ':running': 'running',
        ':now': finish.now,
        ...(finish.state === 'failed' ? { ':queued': 'queued' } : {}),
        ...(finish.epoch === null ? {} : { ':epoch': finish.epoch }),
        ...(finish.failure ? { ':failure': finish.failure } : {}),
        ...(finish.resume ? { ':resume': finish.resume } : {}),
      },
    };
  }

  /**
   * The ended run's outcome event is published: it leaves the outbox and the active index.
   * Idempotent; a run with nothing pending is left alone.
   */
  async clearOutbox(runId: string): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { runId },
          UpdateExpression: 'REMOVE outboxAt, activeShard',
          ConditionExpression: 'attribute_exists(outboxAt)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /**
   * Writes an ended run's completeness check, once: a redelivered ending or a late retry finds it
   * written and leaves it (the first check is the one taken when the run ended).
   */
  async recordCompleteness(runId: string, completeness: Completeness): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { runId },
          UpdateExpression: 'SET completeness = :completeness',
          ConditionExpression: 'attribute_exists(runId) AND attribute_not_exists(completeness)',
          ExpressionAttributeValues: { ':completeness': completeness },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Parts of the cancel update, shared with the transaction that also releases the source lock. */
  static cancelUpdate(runId: string, now: number) {
    return {
      Key: { runId },
      UpdateExpression: 'SET #state = :cancelled, finishedAt = :now, updatedAt = :now REMOVE activeShard',
      ConditionExpression: 'attribute_exists(runId) AND #state IN (:queued, :running)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':cancelled': 'cancelled',
        ':queued': 'queued',
        ':running': 'running',
        ':now': now,
      },
    };
  }

  /**
   * Deletes every run of a source (the source was deleted and holds no active run). Returns how
   * many. The by-source index is eventually consistent: a run created a moment ago may survive.
   */
  async deleteAllOf(sourceId: string): Promise<number> {
    return deleteAllQueried(
      this.doc,
      {
        TableName: this.tableName,
        IndexName: INDEX.runsBySource,
        KeyConditionExpression: 'sourceId = :s',
        ExpressionAttributeValues: { ':s': sourceId },
      },
      (item) => [{ runId: item.runId }, ...chainRefsOfItem(item).map(chainKey)],
    );
  }

  /** Runs of a source, newest first, a page at a time. */
  async listBySource(
    sourceId: string,
    options: { limit?: number; cursor?: string } = {},
  ): Promise<Page<SyncRun>> {
    const { Items = [], LastEvaluatedKey } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: INDEX.runsBySource,
        KeyConditionExpression: 'sourceId = :sourceId',
        ExpressionAttributeValues: { ':sourceId': sourceId },
        ScanIndexForward: false,
        Limit: options.limit ?? 50,
        ExclusiveStartKey: decodeCursor(options.cursor),
      }),
    );
    return {
      items: await withChains(this.doc, this.tableName, Items),
      cursor: encodeCursor(LastEvaluatedKey),
    };
  }

  /** A source's last run and its last successful one, for the source view (see {@link recentRunsOf}). */
  recentOf(sourceId: string): Promise<{ last: RunSummary | null; lastSuccess: RunSummary | null }> {
    return recentRunsOf(this.doc, this.tableName, sourceId);
  }

  /** Runs of every source, optionally in one state, a page at a time (see {@link scanRuns}). */
  async listAcrossSources(
    options: { state?: RunState; limit?: number; cursor?: string } = {},
  ): Promise<Page<SyncRun>> {
    const { items, cursor } = await scanRuns(this.doc, this.tableName, options);
    return { items: await withChains(this.doc, this.tableName, items), cursor };
  }

  /**
   * Active runs (and ended runs still in the outbox) whose run item was not written since
   * `silentSince`, from the sparse active index: the candidates the reaper looks at. Their chains
   * beat on their own items, so whether a candidate is silent is the reaper's judgement of each
   * chain; the index is eventually consistent too: the reaper re-reads each before acting.
   */
  async listSilent(silentSince: number): Promise<SyncRun[]> {
    // One query per shard of the active index (writes are spread over them, see ACTIVE_SHARD_COUNT).
    const shards = await Promise.all(
      ACTIVE_SHARDS.map((shard) =>
        queryAll(this.doc, {
          TableName: this.tableName,
          IndexName: INDEX.activeRuns,
          KeyConditionExpression: 'activeShard = :active AND heartbeatAt < :since',
          ExpressionAttributeValues: { ':active': shard, ':since': silentSince },
        }),
      ),
    );
    return shards.flat().map((item) => toSyncRun(item));
  }

  /** Every active run (for operators and tests); ended runs still in the outbox are left out. */
  async listActive(): Promise<SyncRun[]> {
    const runs = await this.listSilent(Number.MAX_SAFE_INTEGER);
    return (
      await Promise.all(runs.filter((run) => isActive(run.state)).map((run) => this.get(run.runId)))
    ).filter((run): run is SyncRun => run !== undefined);
  }

  private async update(
    runId: string,
    update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
    expected: Expected,
  ): Promise<void> {
    try {
      await this.doc.send(new UpdateCommand({ TableName: this.tableName, Key: { runId }, ...update }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw await this.explainRefusal(runId, expected, error);
    }
  }

  /** Reads the run after a refused condition and names the reason (see `refusals.ts`). */
  async explainRefusal(runId: string, expected: Expected, cause?: unknown): Promise<StoreError> {
    return explainRefusal(runId, await this.get(runId), expected, cause);
  }
}
