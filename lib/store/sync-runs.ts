import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ACTIVE_SHARDS, activeShardOf, INDEX } from '../resources/definitions.js';
import {
  type Checkpoint,
  isActive,
  type ResumeRecord,
  type RunFailure,
  type RunMode,
  type RunState,
  type RunTrigger,
  type SyncRun,
} from '../run/model.js';
import {
  DuplicatePageError,
  isConditionFailure,
  PageOutOfOrderError,
  RunCancelledError,
  RunExistsError,
  RunFencedError,
  RunFinishedError,
  RunNotFoundError,
  RunStateError,
  type StoreError,
} from './errors.js';
import { decodeCursor, deleteAllQueried, encodeCursor, type Page, queryAll } from './paging.js';
import { toSyncRun } from './run-item.js';

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
  readonly now: number;
}

/** One page's completion: moves checkpoint, nextPage and heartbeat and adds to the counters, at once. */
export interface PageCommit {
  readonly runId: string;
  readonly epoch: number;
  /** The page being committed; must equal the run's `nextPage`. */
  readonly page: number;
  readonly checkpoint: Omit<Checkpoint, 'page' | 'at'>;
  readonly processed: number;
  readonly errors: number;
  /** Total entities, when the source tells. */
  readonly total?: number | null;
  /** Items this page tombstoned (reconciliation's tombstone pass); added to the run's `tombstoned`. */
  readonly tombstoned?: number;
  /** Dead letters this page resolved as gone (retry-failed); added to the run's `gone`. */
  readonly gone?: number;
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

/** A fence: the reaper's re-arming of a run under a new epoch. */
export interface Fence {
  readonly runId: string;
  /** The epoch the reaper read; the fence fails if another reaper got there first. */
  readonly epoch: number;
  readonly resume: ResumeRecord;
  /** Start again from page 1 with zeroed counters (the checkpoint attribute itself is kept). */
  readonly reset: boolean;
  /** Count this fence against the run's restart budget (a crash), or not (a lost first message). */
  readonly countRestart: boolean;
  /** New parameters for a run restarted from scratch after its source was reconfigured. */
  readonly params?: { readonly params: Record<string, unknown>; readonly paramsHash: string };
  /** The page the re-armed run continues with (handed to the queue with the fence). */
  readonly page: number;
  readonly now: number;
}

/** Parts of the store's update expressions shared by several intents. */
export const RUN_CONDITIONS = {
  runningAtEpoch: 'attribute_exists(runId) AND #state = :running AND epoch = :epoch',
} as const;

/**
 * The SyncRun repository: the only code that knows the table's keys and conditions. Every
 * write is one conditional `UpdateItem` on named attributes (never a whole-item put after
 * creation), so no write can erase what another wrote — in particular the checkpoint, which
 * only {@link SyncRunStore.commitPage} moves.
 */
export class SyncRunStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** Stores a new queued run (epoch 1, page 1 next). Fails with {@link RunExistsError} on a reused id. */
  async create(run: NewRun): Promise<SyncRun> {
    const item = SyncRunStore.newItem(run);
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(runId)',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error))
        throw new RunExistsError(`run ${run.runId} exists`, { runId: run.runId });
      throw error;
    }
    return toSyncRun(item);
  }

  /** The item a new run is stored as; also used inside the create-and-lock transaction. */
  static newItem(run: NewRun): Record<string, unknown> {
    return {
      runId: run.runId,
      sourceId: run.sourceId,
      mode: run.mode,
      trigger: run.trigger ?? 'api',
      params: run.params,
      paramsHash: run.paramsHash,
      state: 'queued',
      epoch: 1,
      nextPage: 1,
      progress: { processed: 0, total: null, pages: 0 },
      errorCount: 0,
      heartbeatAt: run.now,
      // Page 1 is due from the start; startRun confirms the send.
      handoff: { page: 1, at: run.now, sentAt: null },
      restarts: 0,
      resume: run.resume,
      createdAt: run.now,
      updatedAt: run.now,
      activeShard: activeShardOf(run.runId),
    };
  }

  /** The run, read strongly consistent, or undefined. */
  async get(runId: string): Promise<SyncRun | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { runId }, ConsistentRead: true }),
    );
    return Item ? toSyncRun(Item) : undefined;
  }

  /** The run, or {@link RunNotFoundError}. */
  async require(runId: string): Promise<SyncRun> {
    const run = await this.get(runId);
    if (!run) throw new RunNotFoundError(`run ${runId} not found`, { runId });
    return run;
  }

  /** queued → running, by the worker that takes page 1 at the run's current epoch. */
  async start(runId: string, epoch: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        // Taking page 1 is the first worker's claim: the handoff ends, silence from now on is a crash.
        UpdateExpression:
          'SET #state = :running, startedAt = :now, heartbeatAt = :now, updatedAt = :now REMOVE handoff',
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

  /** Proof of life from the worker holding `epoch`; fails once the run was fenced, cancelled or ended. */
  async heartbeat(runId: string, epoch: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        UpdateExpression: 'SET heartbeatAt = :now, updatedAt = :now',
        ConditionExpression: RUN_CONDITIONS.runningAtEpoch,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':running': 'running', ':epoch': epoch, ':now': now },
      },
      { epoch },
    );
  }

  /**
   * The heartbeat a worker sends before it starts work on a page: proof of life from the first
   * millisecond, and the end of the page's handoff (from now on silence means this worker died).
   * Conditioned on the page too, so a duplicate delivery learns it is late before fetching.
   */
  async claim(runId: string, epoch: number, page: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        UpdateExpression: 'SET heartbeatAt = :now, updatedAt = :now REMOVE handoff',
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND nextPage = :page`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':running': 'running', ':epoch': epoch, ':page': page, ':now': now },
      },
      { epoch, page },
    );
  }

  /**
   * Confirms that the handed-over page is on the queue. Returns false when the handoff is no
   * longer this one (a worker already took the page, the run moved on or ended): nothing to confirm.
   */
  async confirmSent(runId: string, epoch: number, page: number, now: number): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { runId },
          UpdateExpression: 'SET handoff.sentAt = :now',
          // Queued too: page 1 of a new run is confirmed before any worker started it.
          ConditionExpression:
            'attribute_exists(runId) AND #state IN (:queued, :running) AND epoch = :epoch AND nextPage = :page AND handoff.page = :page',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':running': 'running',
            ':epoch': epoch,
            ':page': page,
            ':now': now,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Takes over a handoff to send its page again: conditional on the handoff read (`at`), so of
   * two reapers (or a reaper and a duplicate delivery) noticing the same lost send, one re-sends.
   * Returns false when another got there first or a worker took the page meanwhile.
   */
  async renewHandoff(
    runId: string,
    epoch: number,
    page: number,
    readAt: number,
    now: number,
  ): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { runId },
          UpdateExpression: 'SET handoff = :handoff',
          ConditionExpression:
            'attribute_exists(runId) AND #state IN (:queued, :running) AND epoch = :epoch AND nextPage = :page AND handoff.page = :page AND handoff.#at = :readAt',
          ExpressionAttributeNames: { '#state': 'state', '#at': 'at' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':running': 'running',
            ':epoch': epoch,
            ':page': page,
            ':readAt': readAt,
            ':handoff': { page, at: now, sentAt: null },
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * A step that failed by exception gives its page back to the queue, which redelivers it after
   * its redelivery delay: the run waits for that delivery (or for the page DLQ and its drain)
   * instead of looking crashed to the reaper. The page is already on the queue, so the handoff
   * is confirmed at once.
   */
  async handBack(runId: string, epoch: number, page: number, now: number): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { runId },
          UpdateExpression: 'SET handoff = :handoff, heartbeatAt = :now, updatedAt = :now',
          ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND nextPage = :page`,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':running': 'running',
            ':epoch': epoch,
            ':page': page,
            ':now': now,
            ':handoff': { page, at: now, sentAt: now },
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Commits one complete page: checkpoint, nextPage, heartbeat and the counters in
   * one conditional write on state, epoch and nextPage. A duplicate or stale message fails the
   * condition, so it can never count twice or enqueue a successor.
   */
  async commitPage(c: PageCommit): Promise<void> {
    const checkpoint: Checkpoint = { ...c.checkpoint, page: c.page, at: c.now };
    const setTotal = c.total !== undefined && c.total !== null;
    const addTombstoned = c.tombstoned !== undefined && c.tombstoned > 0;
    const addGone = c.gone !== undefined && c.gone > 0;
    await this.update(
      c.runId,
      {
        UpdateExpression: `${[
          'SET checkpoint = :checkpoint, nextPage = :following, heartbeatAt = :now, updatedAt = :now',
          // The successor is due from this instant; the worker confirms its send right after.
          'handoff = :handoff',
          '#progress.#processed = #progress.#processed + :processed, #progress.#pages = #progress.#pages + :one',
          'errorCount = errorCount + :errors',
          ...(setTotal ? ['#progress.#total = :total'] : []),
          ...(addTombstoned ? ['tombstoned = if_not_exists(tombstoned, :none) + :tombstoned'] : []),
          ...(addGone ? ['gone = if_not_exists(gone, :none) + :gone'] : []),
        ].join(', ')} REMOVE deferredUntil`,
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND nextPage = :page`,
        ExpressionAttributeNames: {
          '#state': 'state',
          '#progress': 'progress',
          '#processed': 'processed',
          '#pages': 'pages',
          ...(setTotal ? { '#total': 'total' } : {}),
        },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':epoch': c.epoch,
          ':page': c.page,
          ':following': c.page + 1,
          ':handoff': { page: c.page + 1, at: c.now, sentAt: null },
          ':checkpoint': checkpoint,
          ':processed': c.processed,
          ':errors': c.errors,
          ':one': 1,
          ':now': c.now,
          ...(setTotal ? { ':total': c.total } : {}),
          ...(addTombstoned || addGone ? { ':none': 0 } : {}),
          ...(addTombstoned ? { ':tombstoned': c.tombstoned } : {}),
          ...(addGone ? { ':gone': c.gone } : {}),
        },
      },
      { epoch: c.epoch, page: c.page },
    );
  }

  /** Records a planned pause so the reaper does not mistake it for a crash. */
  async defer(runId: string, epoch: number, page: number, until: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        UpdateExpression:
          'SET deferredUntil = :until, heartbeatAt = :now, updatedAt = :now, handoff = :handoff',
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND nextPage = :page`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':epoch': epoch,
          ':page': page,
          ':until': until,
          ':now': now,
          ':handoff': { page, at: now, sentAt: null },
        },
      },
      { epoch, page },
    );
  }

  /**
   * Re-arms an active run under epoch + 1 and records the verdict. Any write of the previous
   * epoch's worker fails from now on. Two reapers fencing at once: one wins, the other gets
   * {@link RunFencedError}. Returns the new epoch.
   */
  async fence(f: Fence): Promise<number> {
    const resetParts = f.reset ? ', nextPage = :first, #progress = :zero, errorCount = :none' : '';
    const paramsParts = f.params ? ', params = :params, paramsHash = :paramsHash' : '';
    await this.update(
      f.runId,
      {
        UpdateExpression:
          `SET epoch = epoch + :one, #state = :running, #resume = :resume, heartbeatAt = :now, updatedAt = :now, startedAt = if_not_exists(startedAt, :now), restarts = restarts + :restart, handoff = :handoff${resetParts}${paramsParts}` +
          // From scratch, a partitioned run plans again: its partitions go with its old pass.
          ` REMOVE deferredUntil${f.reset ? ', #parts, openPartitions' : ''}`,
        ConditionExpression: 'attribute_exists(runId) AND #state IN (:queued, :running) AND epoch = :epoch',
        ExpressionAttributeNames: {
          '#state': 'state',
          '#resume': 'resume',
          ...(f.reset ? { '#progress': 'progress', '#parts': 'partitions' } : {}),
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':running': 'running',
          ':queued': 'queued',
          ':epoch': f.epoch,
          ':resume': f.resume,
          ':now': f.now,
          ':restart': f.countRestart ? 1 : 0,
          ':handoff': { page: f.page, at: f.now, sentAt: null },
          ...(f.reset ? { ':first': 1, ':zero': { processed: 0, total: null, pages: 0 }, ':none': 0 } : {}),
          ...(f.params ? { ':params': f.params.params, ':paramsHash': f.params.paramsHash } : {}),
        },
      },
      { epoch: f.epoch },
    );
    return f.epoch + 1;
  }

  /** Parts of the finish update, shared with the transaction that also releases the source lock. */
  static finishUpdate(runId: string, finish: RunFinish) {
    // A failure may end a run that never started (a crash loop on page 1), so `failed` also
    // accepts queued; success requires the running worker's epoch.
    const states = finish.state === 'failed' ? '#state IN (:running, :queued)' : '#state = :running';
    const epochCondition = finish.epoch === null ? '' : ' AND epoch = :epoch';
    // A run that succeeded read its whole stream: its total is what it processed, not an estimate.
    const succeeded = finish.state === 'succeeded';
    return {
      Key: { runId },
      UpdateExpression:
        'SET #state = :final, finishedAt = :now, updatedAt = :now' +
        (finish.failure ? ', failure = :failure' : '') +
        (finish.resume ? ', #resume = :resume' : '') +
        (succeeded ? ', #progress.#total = #progress.#processed' : '') +
        // The outbox: the ended run stays in the active index, marked, until its outcome event
        // is confirmed published (clearOutbox); the reaper re-publishes it if the worker died first.
        // heartbeatAt: the reaper looks at an ended run only once it has been silent 90 s since.
        ', outboxAt = :now, heartbeatAt = :now' +
        ' REMOVE deferredUntil, handoff',
      ConditionExpression: `attribute_exists(runId) AND ${states}${epochCondition}`,
      ExpressionAttributeNames: {
        '#state': 'state',
        ...(finish.resume ? { '#resume': 'resume' } : {}),
        ...(succeeded ? { '#progress': 'progress', '#total': 'total', '#processed': 'processed' } : {}),
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

  /** Ends the run (without touching the source lock; see `RunLifecycle.finish` for the usual path). */
  async finish(runId: string, finish: RunFinish): Promise<void> {
    const { Key: _key, ...update } = SyncRunStore.finishUpdate(runId, finish);
    await this.update(runId, update, { epoch: finish.epoch ?? undefined });
  }

  /** Parts of the cancel update, shared with the transaction that also releases the source lock. */
  static cancelUpdate(runId: string, now: number) {
    return {
      Key: { runId },
      UpdateExpression:
        'SET #state = :cancelled, finishedAt = :now, updatedAt = :now REMOVE activeShard, deferredUntil, handoff',
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

  /** queued/running → cancelled (without touching the source lock; see `RunLifecycle.cancel`). */
  async cancel(runId: string, now: number): Promise<void> {
    const { Key: _key, ...update } = SyncRunStore.cancelUpdate(runId, now);
    await this.update(runId, update, {});
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
      (item) => ({ runId: item.runId }),
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
    return { items: Items.map(toSyncRun), cursor: encodeCursor(LastEvaluatedKey) };
  }

  /**
   * Runs of every source, optionally in one state, a page at a time. A scan (the table is keyed
   * by run): pages are filled up to `limit` matches within a bound on round trips, newest first
   * within a page, in no order across pages. For operators; nothing on the run path calls it.
   */
  async listAcrossSources(
    options: { state?: RunState; limit?: number; cursor?: string } = {},
  ): Promise<Page<SyncRun>> {
    const limit = options.limit ?? 50;
    const items: SyncRun[] = [];
    let start = decodeCursor(options.cursor);
    for (let round = 0; round < 10 && items.length < limit; round++) {
      const { Items = [], LastEvaluatedKey } = await this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          // Every run has a state; the positions stored in the same table have none.
          ...(options.state
            ? {
                FilterExpression: '#state = :state',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':state': options.state },
              }
            : {
                FilterExpression: 'attribute_exists(#state)',
                ExpressionAttributeNames: { '#state': 'state' },
              }),
          // A filtered scan may return fewer than it reads: ask for more per round.
          Limit: Math.max(limit - items.length, 100),
          ExclusiveStartKey: start,
        }),
      );
      let cut = false;
      for (const item of Items) {
        if (items.length === limit) {
          cut = true;
          break;
        }
        items.push(toSyncRun(item));
      }
      start = cut ? { runId: items.at(-1)!.runId } : LastEvaluatedKey;
      if (!start) break;
    }
    items.sort((a, b) => (a.runId < b.runId ? 1 : -1));
    return { items, cursor: encodeCursor(start) };
  }

  /**
   * Active runs (and ended runs still in the outbox) whose last heartbeat is older than
   * `silentSince`, from the sparse active index.
   * Deferred runs are left out until their pause ended before `silentSince` too, so the worker
   * that picks the woken page has the same grace as any other. The index is eventually
   * consistent: the reaper re-reads each candidate before acting.
   */
  async listSilent(silentSince: number): Promise<SyncRun[]> {
    // One query per shard of the active index (writes are spread over them, see ACTIVE_SHARD_COUNT).
    const shards = await Promise.all(
      ACTIVE_SHARDS.map((shard) =>
        queryAll(this.doc, {
          TableName: this.tableName,
          IndexName: INDEX.activeRuns,
          KeyConditionExpression: 'activeShard = :active AND heartbeatAt < :since',
          FilterExpression: 'attribute_not_exists(deferredUntil) OR deferredUntil <= :since',
          ExpressionAttributeValues: { ':active': shard, ':since': silentSince },
        }),
      ),
    );
    return shards.flat().map(toSyncRun);
  }

  /** Every active run (for operators and tests); ended runs still in the outbox are left out. */
  async listActive(): Promise<SyncRun[]> {
    return (await this.listSilent(Number.MAX_SAFE_INTEGER)).filter((run) => isActive(run.state));
  }

  private async update(
    runId: string,
    update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
    expected: { epoch?: number | undefined; page?: number },
  ): Promise<void> {
    try {
      await this.doc.send(new UpdateCommand({ TableName: this.tableName, Key: { runId }, ...update }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw await this.explainRefusal(runId, expected, error);
    }
  }

  /**
   * Reads the run after a refused condition and names the reason. Order matters: a cancelled
   * run is reported as cancelled even to a zombie, so every worker learns to stop for good.
   */
  async explainRefusal(
    runId: string,
    expected: { epoch?: number | undefined; page?: number },
    cause?: unknown,
  ): Promise<StoreError> {
    const run = await this.get(runId);
    const context = {
      runId,
      ...expected,
      ...(run ? { state: run.state, epoch: run.epoch, nextPage: run.nextPage } : {}),
    };
    if (!run) return new RunNotFoundError(`run ${runId} not found`, context, { cause });
    if (run.state === 'cancelled')
      return new RunCancelledError(`run ${runId} was cancelled`, context, { cause });
    if (expected.epoch !== undefined && run.epoch !== expected.epoch) {
      return new RunFencedError(
        `run ${runId} moved to epoch ${run.epoch}; epoch ${expected.epoch} is fenced`,
        context,
        {
          cause,
        },
      );
    }
    if (run.state === 'succeeded' || run.state === 'failed') {
      return new RunFinishedError(`run ${runId} already ${run.state}`, context, { cause });
    }
    if (expected.page !== undefined && run.state === 'running') {
      if (run.nextPage > expected.page) {
        return new DuplicatePageError(`page ${expected.page} of run ${runId} is already committed`, context, {
          cause,
        });
      }
      if (run.nextPage < expected.page) {
        return new PageOutOfOrderError(
          `run ${runId} expects page ${run.nextPage}, not ${expected.page}`,
          context,
          {
            cause,
          },
        );
      }
    }
    return new RunStateError(`run ${runId} is ${run.state}; the write does not apply`, context, { cause });
  }
}
