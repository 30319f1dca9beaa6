import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Checkpoint, Partition, ResumeRecord, SyncRun } from '../run/model.js';
import {
  DuplicatePageError,
  isConditionFailure,
  PageOutOfOrderError,
  RunStateError,
  type StoreError,
} from './errors.js';
import { toSyncRun } from './run-item.js';
import { RUN_CONDITIONS, type SyncRunStore } from './sync-runs.js';

/**
 * The partitions of a partitioned run, stored as a map attribute `partitions` on the run's own
 * item (keyed by partition index), beside the run-level aggregates. Every write is one
 * conditional UpdateItem on named nested attributes, conditioned on the run's state and epoch
 * (so cancel and fencing stop every partition at its next write) and on the partition's own
 * `nextPage` (so a duplicate page message of a partition never counts twice): the rules of a
 * one-stream run, per partition.
 */

/** One partition page's completion. */
export interface PartitionCommit {
  readonly runId: string;
  readonly epoch: number;
  readonly partition: number;
  /** The page being committed; must equal the partition's `nextPage`. */
  readonly page: number;
  readonly checkpoint: Omit<Checkpoint, 'page' | 'at'>;
  /** The partition's lowest watermark ceiling after this page (null: none). */
  readonly ceiling: string | null;
  /** The latest version the partition read after this page, and the ids read at it. */
  readonly latest: string | null;
  readonly latestIds: readonly string[];
  /**
   * How the partition's last page (`checkpoint.cursor` null) ends it: `done`; `last_open` — done,
   * only while no other partition is open (else the write is refused); `idle` — the open window
   * waits for a tail pass, only while another partition is open (else refused).
   */
  readonly ending?: PartitionEnding;
  readonly processed: number;
  readonly errors: number;
  readonly now: number;
}

export type PartitionEnding = 'done' | 'last_open' | 'idle';

/** A partition the fence re-arms, at the page it continues with. */
export interface RearmedPartition {
  readonly index: number;
  readonly page: number;
}

/** Names shared by the partition expressions. */
const NAMES = { '#state': 'state', '#parts': 'partitions' } as const;

export class PartitionStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly runs: SyncRunStore,
  ) {}

  /**
   * Records a run's plan: its partitions, each due at page 1, and the count of open ones. It is
   * the run's page 1 (the planning step): conditioned like a page commit of page 1, so of two
   * deliveries of the planning message exactly one writes a plan. The run-level chain ends
   * here (`nextPage` 2, no handoff); from now on each partition carries its own.
   */
  async plan(p: {
    runId: string;
    epoch: number;
    partitions: Readonly<Record<string, Partition>>;
    total: number | null;
    now: number;
  }): Promise<void> {
    const setTotal = p.total !== null;
    await this.update(
      p.runId,
      {
        UpdateExpression:
          'SET #parts = :partitions, openPartitions = :open, nextPage = :two, heartbeatAt = :now, updatedAt = :now' +
          (setTotal ? ', #progress.#total = :total' : '') +
          ' REMOVE handoff, deferredUntil',
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND nextPage = :one AND attribute_not_exists(#parts)`,
        ExpressionAttributeNames: {
          ...NAMES,
          ...(setTotal ? { '#progress': 'progress', '#total': 'total' } : {}),
        },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':epoch': p.epoch,
          ':one': 1,
          ':two': 2,
          ':now': p.now,
          ':open': Object.keys(p.partitions).length,
          ':partitions': Object.fromEntries(
            Object.entries(p.partitions).map(([key, partition]) => [key, storedPartition(partition)]),
          ),
          ...(setTotal ? { ':total': p.total } : {}),
        },
      },
      { epoch: p.epoch, page: 1 },
    );
  }

  /** The partition's first heartbeat on a page: proof of life, and the end of its handoff. */
  async claim(runId: string, epoch: number, partition: number, page: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        UpdateExpression: 'SET #parts.#p.heartbeatAt = :now, updatedAt = :now REMOVE #parts.#p.handoff',
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.nextPage = :page AND #parts.#p.#state = :running`,
        ExpressionAttributeNames: { ...NAMES, '#p': String(partition) },
        ExpressionAttributeValues: { ':running': 'running', ':epoch': epoch, ':page': page, ':now': now },
      },
      { epoch, partition, page },
    );
  }

  /** Proof of life from the worker holding a page of `partition` at `epoch`. */
  async heartbeat(runId: string, epoch: number, partition: number, now: number): Promise<void> {
    await this.update(
      runId,
      {
        UpdateExpression: 'SET #parts.#p.heartbeatAt = :now',
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND attribute_exists(#parts.#p)`,
        ExpressionAttributeNames: { ...NAMES, '#p': String(partition) },
        ExpressionAttributeValues: { ':running': 'running', ':epoch': epoch, ':now': now },
      },
      { epoch },
    );
  }

  /** Confirms the partition's handed-over page is on the queue; false when the handoff moved on. */
  async confirmSent(runId: string, epoch: number, partition: number, page: number, now: number) {
    return this.tryUpdate(runId, {
      UpdateExpression: 'SET #parts.#p.handoff.sentAt = :now',
      ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.nextPage = :page AND #parts.#p.handoff.#page = :page`,
      ExpressionAttributeNames: { ...NAMES, '#p': String(partition), '#page': 'page' },
      ExpressionAttributeValues: { ':running': 'running', ':epoch': epoch, ':page': page, ':now': now },
    });
  }

  /** Takes over the partition's handoff to send its page again (one of two noticing reapers wins). */
  async renewHandoff(
    runId: string,
    epoch: number,
    partition: number,
    page: number,
    readAt: number,
    now: number,
  ): Promise<boolean> {
    return this.tryUpdate(runId, {
      UpdateExpression: 'SET #parts.#p.handoff = :handoff',
      ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.nextPage = :page AND #parts.#p.handoff.#page = :page AND #parts.#p.handoff.#at = :readAt`,
      ExpressionAttributeNames: { ...NAMES, '#p': String(partition), '#page': 'page', '#at': 'at' },
      ExpressionAttributeValues: {
        ':running': 'running',
        ':epoch': epoch,
        ':page': page,
        ':readAt': readAt,
        ':handoff': { page, at: now, sentAt: null },
      },
    });
  }

  /** A partition page that failed by exception is back on the queue: the partition waits for its redelivery. */
  async handBack(runId: string, epoch: number, partition: number, page: number, now: number) {
    return this.tryUpdate(runId, {
      UpdateExpression: 'SET #parts.#p.handoff = :handoff, #parts.#p.heartbeatAt = :now, updatedAt = :now',
      ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.nextPage = :page`,
      ExpressionAttributeNames: { ...NAMES, '#p': String(partition) },
      ExpressionAttributeValues: {
        ':running': 'running',
        ':epoch': epoch,
        ':page': page,
        ':now': now,
        ':handoff': { page, at: now, sentAt: now },
      },
    });
  }

  /** Records a planned pause of one partition, so the reaper does not mistake it for a crash. */
  async defer(runId: string, epoch: number, partition: number, page: number, until: number, now: number) {
    await this.update(
      runId,
      {
        UpdateExpression:
          'SET #parts.#p.deferredUntil = :until, #parts.#p.heartbeatAt = :now, #parts.#p.handoff = :handoff, updatedAt = :now',
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.nextPage = :page`,
        ExpressionAttributeNames: { ...NAMES, '#p': String(partition) },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':epoch': epoch,
          ':page': page,
          ':until': until,
          ':now': now,
          ':handoff': { page, at: now, sentAt: null },
        },
      },
      { epoch, partition, page },
    );
  }

  /**
   * Commits one complete page of a partition in one conditional write: the partition's
   * checkpoint, nextPage, heartbeat, ceiling and counters, and the run's counters. The
   * partition's last page (`checkpoint.cursor` null) marks it done and takes one off the run's
   * open count (or, for the open window, idle; see {@link PartitionCommit.ending}). The run after
   * the write is returned, so the worker whose commit took the count to 0 — exactly one — ends
   * the run, and the one whose commit left only an idle open window arms its tail pass.
   */
  async commit(c: PartitionCommit): Promise<SyncRun> {
    const last = c.checkpoint.cursor === null;
    const ending: PartitionEnding | undefined = last ? (c.ending ?? 'done') : undefined;
    const checkpoint: Checkpoint = { ...c.checkpoint, page: c.page, at: c.now };
    const sets = [
      '#parts.#p.checkpoint = :checkpoint, #parts.#p.nextPage = :following',
      '#parts.#p.heartbeatAt = :now, #parts.#p.ceiling = :ceiling, updatedAt = :now',
      '#parts.#p.latest = :latest, #parts.#p.latestIds = :latestIds',
      '#parts.#p.#processed = #parts.#p.#processed + :processed',
      '#parts.#p.#pages = #parts.#p.#pages + :one',
      '#parts.#p.errorCount = #parts.#p.errorCount + :errors',
      '#progress.#processed = #progress.#processed + :processed, #progress.#pages = #progress.#pages + :one',
      'errorCount = errorCount + :errors',
      ...(ending === undefined ? ['#parts.#p.handoff = :handoff'] : []),
      ...(ending === 'done' || ending === 'last_open'
        ? ['#parts.#p.#state = :done', 'openPartitions = openPartitions - :one']
        : []),
      ...(ending === 'idle' ? ['#parts.#p.#state = :idle'] : []),
    ];
    const removes = ['#parts.#p.deferredUntil', ...(ending ? ['#parts.#p.handoff'] : [])];
    const countCondition =
      ending === 'last_open'
        ? ' AND openPartitions = :one'
        : ending === 'idle'
          ? ' AND openPartitions > :one'
          : '';
    const { Attributes } = await this.update(
      c.runId,
      {
        UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.nextPage = :page AND #parts.#p.#state = :running${countCondition}`,
        ExpressionAttributeNames: {
          ...NAMES,
          '#p': String(c.partition),
          '#progress': 'progress',
          '#processed': 'processed',
          '#pages': 'pages',
        },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':epoch': c.epoch,
          ':page': c.page,
          ':following': c.page + 1,
          ':checkpoint': checkpoint,
          ':ceiling': c.ceiling,
          ':latest': c.latest,
          ':latestIds': [...c.latestIds],
          ':processed': c.processed,
          ':errors': c.errors,
          ':one': 1,
          ':now': c.now,
          ...(ending === undefined ? { ':handoff': { page: c.page + 1, at: c.now, sentAt: null } } : {}),
          ...(ending === 'done' || ending === 'last_open' ? { ':done': 'done' } : {}),
          ...(ending === 'idle' ? { ':idle': 'idle' } : {}),
        },
        ReturnValues: 'ALL_NEW',
      },
      { epoch: c.epoch, partition: c.partition, page: c.page },
    );
    return toSyncRun(Attributes ?? {});
  }

  /**
   * Starts the tail pass of an idle open window: it reads again from the latest version it read
   * (`from`), at its next page, now that every other window is done. Conditioned on the partition
   * being idle, so of two deciders (the worker that finished the last other window, the reaper)
   * one arms it. Returns false when another did.
   */
  async armTail(
    runId: string,
    epoch: number,
    partition: number,
    from: string | null,
    page: number,
    now: number,
  ) {
    return this.tryUpdate(runId, {
      UpdateExpression:
        'SET #parts.#p.#state = :running, #parts.#p.tailFrom = :from, #parts.#p.handoff = :handoff, #parts.#p.heartbeatAt = :now, updatedAt = :now',
      ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND #parts.#p.#state = :idle`,
      ExpressionAttributeNames: { ...NAMES, '#p': String(partition) },
      ExpressionAttributeValues: {
        ':running': 'running',
        ':idle': 'idle',
        ':epoch': epoch,
        ':from': from,
        ':now': now,
        ':handoff': { page, at: now, sentAt: null },
      },
    });
  }

  /**
   * Re-arms a partitioned run under epoch + 1 after one of its partitions' workers was lost: every
   * unfinished partition is handed to the queue again at its own next page (continuing from its
   * own checkpoint), and any write of the previous epoch fails from now on. Conditioned on the
   * epoch read, so of two reapers one fences. Returns the new epoch.
   */
  async fenceResume(f: {
    runId: string;
    epoch: number;
    resume: ResumeRecord;
    countRestart: boolean;
    partitions: readonly RearmedPartition[];
    now: number;
  }): Promise<number> {
    const names: Record<string, string> = { ...NAMES, '#resume': 'resume' };
    const values: Record<string, unknown> = {
      ':one': 1,
      ':running': 'running',
      ':epoch': f.epoch,
      ':resume': f.resume,
      ':now': f.now,
      ':restart': f.countRestart ? 1 : 0,
    };
    const sets = [
      'epoch = epoch + :one, #state = :running, #resume = :resume, heartbeatAt = :now, updatedAt = :now',
      'restarts = restarts + :restart',
    ];
    const removes = ['deferredUntil'];
    for (const partition of f.partitions) {
      const key = `#p${partition.index}`;
      names[key] = String(partition.index);
      values[`:h${partition.index}`] = { page: partition.page, at: f.now, sentAt: null };
      sets.push(`#parts.${key}.handoff = :h${partition.index}, #parts.${key}.heartbeatAt = :now`);
      removes.push(`#parts.${key}.deferredUntil`);
    }
    await this.update(
      f.runId,
      {
        UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      { epoch: f.epoch },
    );
    return f.epoch + 1;
  }

  private async update(
    runId: string,
    update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
    expected: { epoch: number; partition?: number; page?: number },
  ) {
    try {
      return await this.doc.send(
        new UpdateCommand({ TableName: this.runs.tableName, Key: { runId }, ...update }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw await this.explainRefusal(runId, expected, error);
    }
  }

  private async tryUpdate(
    runId: string,
    update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
  ): Promise<boolean> {
    try {
      await this.doc.send(new UpdateCommand({ TableName: this.runs.tableName, Key: { runId }, ...update }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Names a refused partition write: the run-level reasons first (cancelled, fenced, ended), as
   * for any write; then the partition's own position (a duplicate or an early page).
   */
  private async explainRefusal(
    runId: string,
    expected: { epoch: number; partition?: number; page?: number },
    cause: unknown,
  ): Promise<StoreError> {
    const { partition, page, ...runLevel } = expected;
    // Page 1 of the run itself (the plan): the run-level page rules apply.
    const refusal = await this.runs.explainRefusal(
      runId,
      partition === undefined ? expected : runLevel,
      cause,
    );
    if (!(refusal instanceof RunStateError) || partition === undefined || page === undefined) return refusal;
    const run = await this.runs.get(runId);
    const current = run?.partitions?.[String(partition)];
    const context = { runId, partition, page, nextPage: current?.nextPage, state: current?.state };
    if (current && (current.nextPage > page || current.state === 'done')) {
      return new DuplicatePageError(
        `page ${page} of partition ${partition} of run ${runId} is already committed`,
        context,
        { cause },
      );
    }
    if (current && current.nextPage < page) {
      return new PageOutOfOrderError(
        `partition ${partition} of run ${runId} expects page ${current.nextPage}, not ${page}`,
        context,
        { cause },
      );
    }
    return refusal;
  }
}

/** A partition as stored: absent values are left out rather than stored as nulls. */
function storedPartition(partition: Partition): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(partition).filter(([key, value]) => value !== null && key !== 'index'),
  );
}
