import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ResumeRecord } from '../run/model.js';
import { type ChainRef, chainKey, chainName, chainRefs } from './chain-item.js';

/*
 * The writes that move every chain of a run at once: the fence (a new epoch) and the end of the
 * run. Chain writes never read the run item, so these two carry the run's news to every chain
 * item, in the same transaction as the run item's own write. A run has at most 64 partitions:
 * with its own chain, the run item and the source's lock that stays well inside DynamoDB's 100
 * items per transaction.
 */

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A fence: the re-arming of a run under a new epoch. */
export interface Fence {
  readonly runId: string;
  /** The epoch read; the fence fails if another got there first. */
  readonly epoch: number;
  /** The partitions the run had when read (the fence fails if a plan added some since). */
  readonly partitions: number;
  readonly resume: ResumeRecord;
  /**
   * From scratch: the run's own chain starts again at page 1 with zeroed counters (its checkpoint
   * attribute is kept), the run's counts are zeroed and its partitions are deleted, so a
   * partitioned run plans again.
   */
  readonly reset: boolean;
  /** Chains handed to the queue again at the new epoch, each at its page; `page` null carries an idle window over as idle. */
  readonly rearm: readonly { readonly partition?: number | undefined; readonly page: number | null }[];
  /** Count this fence against the run's restart budget (a crash), or not (a lost first message). */
  readonly countRestart: boolean;
  /** New parameters for a run restarted from scratch after its source was reconfigured. */
  readonly params?: { readonly params: Record<string, unknown>; readonly paramsHash: string };
  readonly now: number;
}

/** The condition that the run still has the partitions it was read with. */
export function partitionGuard(partitions: number): {
  condition: string;
  values: Record<string, unknown>;
} {
  return partitions === 0
    ? { condition: 'attribute_not_exists(partitionCount)', values: {} }
    : { condition: 'partitionCount = :partitionCount', values: { ':partitionCount': partitions } };
}

/** The writes of a fence: the run item's, then each chain's. */
export function fenceWrites(tableName: string, f: Fence): TransactItem[] {
  const guard = partitionGuard(f.partitions);
  const run: TransactItem = {
    Update: {
      TableName: tableName,
      Key: { runId: f.runId },
      UpdateExpression:
        'SET epoch = epoch + :one, #state = :running, #resume = :resume, heartbeatAt = :now, updatedAt = :now, startedAt = if_not_exists(startedAt, :now), restarts = restarts + :restart' +
        (f.reset ? ', #progress = :zero, errorCount = :none' : '') +
        (f.params ? ', params = :params, paramsHash = :paramsHash' : '') +
        (f.reset ? ' REMOVE partitionCount, openPartitions' : ''),
      ConditionExpression: `attribute_exists(runId) AND #state IN (:queued, :running) AND epoch = :epoch AND ${guard.condition}`,
      ExpressionAttributeNames: {
        '#state': 'state',
        '#resume': 'resume',
        ...(f.reset ? { '#progress': 'progress' } : {}),
      },
      ExpressionAttributeValues: {
        ':one': 1,
        ':running': 'running',
        ':queued': 'queued',
        ':epoch': f.epoch,
        ':resume': f.resume,
        ':now': f.now,
        ':restart': f.countRestart ? 1 : 0,
        ...guard.values,
        ...(f.reset ? { ':zero': { processed: 0, total: null, pages: 0 }, ':none': 0 } : {}),
        ...(f.params ? { ':params': f.params.params, ':paramsHash': f.params.paramsHash } : {}),
      },
    },
  };
  const next = f.epoch + 1;
  const chains: TransactItem[] = f.reset
    ? [
        chainUpdate(tableName, { runId: f.runId }, next, f.now, 1, {
          sets: 'chainState = :running, nextPage = :first, #processed = :none, #pages = :none, errorCount = :none',
          names: { '#processed': 'processed', '#pages': 'pages' },
          values: { ':running': 'running', ':first': 1, ':none': 0 },
        }),
        ...chainRefs(f.runId, f.partitions)
          .slice(1)
          .map((ref) => ({ Delete: { TableName: tableName, Key: chainKey(ref) } })),
      ]
    : f.rearm.map((r) =>
        chainUpdate(tableName, { runId: f.runId, partition: r.partition }, next, f.now, r.page),
      );
  return [run, ...chains];
}

/** A chain moved to the new epoch, handed over at `page` (null: no page due, an idle window). */
function chainUpdate(
  tableName: string,
  ref: ChainRef,
  epoch: number,
  now: number,
  page: number | null,
  extra?: { sets: string; names: Record<string, string>; values: Record<string, unknown> },
): TransactItem {
  const due = page === null ? '' : ', handoff = :handoff, heartbeatAt = :now';
  return {
    Update: {
      TableName: tableName,
      Key: chainKey(ref),
      UpdateExpression: `SET epoch = :next${due}${extra ? `, ${extra.sets}` : ''} REMOVE deferredUntil`,
      ConditionExpression: 'attribute_exists(runId)',
      ...(extra ? { ExpressionAttributeNames: extra.names } : {}),
      ExpressionAttributeValues: {
        ':next': epoch,
        ...(page === null ? {} : { ':handoff': { page, at: now, sentAt: null }, ':now': now }),
        ...extra?.values,
      },
    },
  };
}

/**
 * The writes that tell every chain of a run that the run ended: each chain's next write is
 * refused. With `positions` (each chain's next page as read, by chain name), a chain a commit
 * moved since refuses the end, so the outcome built from that read stays exact.
 */
export function endWrites(
  tableName: string,
  refs: readonly ChainRef[],
  now: number,
  positions?: ReadonlyMap<string, number>,
): TransactItem[] {
  return refs.map((ref) => {
    const nextPage = positions?.get(chainName(ref.partition));
    return {
      Update: {
        TableName: tableName,
        Key: chainKey(ref),
        UpdateExpression: 'SET ended = :now REMOVE handoff, deferredUntil',
        ConditionExpression:
          nextPage === undefined ? 'attribute_exists(runId)' : 'attribute_exists(runId) AND nextPage = :read',
        ExpressionAttributeValues: { ':now': now, ...(nextPage === undefined ? {} : { ':read': nextPage }) },
      },
    };
  });
}
