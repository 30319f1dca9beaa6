import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Checkpoint, Partition } from '../run/model.js';
import {
  CHAIN_LIVE,
  type ChainCounters,
  type ChainRef,
  chainKey,
  NO_COUNTS,
  newChainItem,
} from './chain-item.js';
import { RUN_CONDITIONS } from './sync-runs.js';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * How a partition's last page (`checkpoint.cursor` null) ends it: `done`; `last_open` — done,
 * only while no other partition is open (else the write is refused); `idle` — the open window
 * waits for a tail pass, only while another partition is open (else refused). The run's own
 * chain is always `done` by its last page.
 */
export type ChainEnding = 'done' | 'last_open' | 'idle';

/** One page's completion on a chain. */
export interface ChainCommit {
  readonly ref: ChainRef;
  readonly epoch: number;
  /** The page being committed; must equal the chain's `nextPage`. */
  readonly page: number;
  readonly checkpoint: Omit<Checkpoint, 'page' | 'at'>;
  readonly processed: number;
  readonly errors: number;
  /** Total entities, when the source tells (the run's own chain). */
  readonly total?: number | null;
  /** The total the source itself stated on this page (a listing's `total`, not an estimate). */
  readonly statedTotal?: number | null;
  /** Items this page tombstoned (reconciliation's tombstone pass). */
  readonly tombstoned?: number;
  /** Dead letters this page resolved as gone (retry-failed). */
  readonly gone?: number;
  /** Records this page read stamped past the run's clock. */
  readonly ahead?: number;
  /** A partition's keyset bookkeeping after this page (see `Partition`). */
  readonly keyset?: {
    readonly ceiling: string | null;
    readonly latest: string | null;
    readonly latestIds: readonly string[];
  };
  readonly ending?: ChainEnding;
  readonly now: number;
}

/**
 * The writes of a commit: the chain item's update, and when the page ends the chain, the run
 * item's (its counts, which `before` — the chain's counts as read at this very page — plus this
 * page's make, and its open count) in the same transaction.
 */
export function commitWrites(
  tableName: string,
  c: ChainCommit,
  before: ChainCounters | undefined,
  /** Written on the chain, so that the writer can tell its own commit after a lost answer. */
  token: string,
): TransactItem[] {
  const ending = c.checkpoint.cursor === null ? (c.ending ?? 'done') : undefined;
  const checkpoint: Checkpoint = { ...c.checkpoint, page: c.page, at: c.now };
  const setTotal = c.total !== undefined && c.total !== null;
  const setStated = c.statedTotal !== undefined && c.statedTotal !== null;
  const tombstoned = c.tombstoned ?? 0;
  const gone = c.gone ?? 0;
  const ahead = c.ahead ?? 0;
  const sets = [
    'checkpoint = :checkpoint, nextPage = :following, heartbeatAt = :now, writeToken = :token',
    '#processed = #processed + :processed, #pages = #pages + :one, errorCount = errorCount + :errors',
    ...(setTotal ? ['#total = :total'] : []),
    ...(setStated ? ['statedTotal = :stated'] : []),
    ...(tombstoned > 0 ? ['tombstoned = tombstoned + :tombstoned'] : []),
    ...(gone > 0 ? ['gone = gone + :gone'] : []),
    // Chains created before the count existed have no attribute to add to.
    ...(ahead > 0 ? ['ahead = if_not_exists(ahead, :zero) + :ahead'] : []),
    ...(c.keyset ? ['ceiling = :ceiling, latest = :latest, latestIds = :latestIds'] : []),
    // The successor is due from this instant; the next worker's claim ends the handoff.
    ...(ending === undefined ? ['handoff = :handoff'] : ['chainState = :ending']),
  ];
  const chain: TransactItem = {
    Update: {
      TableName: tableName,
      Key: chainKey(c.ref),
      UpdateExpression: `SET ${sets.join(', ')} REMOVE deferredUntil${ending ? ', handoff' : ''}`,
      ConditionExpression: `${CHAIN_LIVE} AND chainState = :running AND nextPage = :page`,
      ExpressionAttributeNames: {
        '#processed': 'processed',
        '#pages': 'pages',
        ...(setTotal ? { '#total': 'total' } : {}),
      },
      ExpressionAttributeValues: {
        ':epoch': c.epoch,
        ':running': 'running',
        ':page': c.page,
        ':following': c.page + 1,
        ':checkpoint': checkpoint,
        ':token': token,
        ':processed': c.processed,
        ':errors': c.errors,
        ':one': 1,
        ':now': c.now,
        ...(setTotal ? { ':total': c.total } : {}),
        ...(setStated ? { ':stated': c.statedTotal } : {}),
        ...(tombstoned > 0 ? { ':tombstoned': tombstoned } : {}),
        ...(gone > 0 ? { ':gone': gone } : {}),
        ...(ahead > 0 ? { ':ahead': ahead, ':zero': 0 } : {}),
        ...(c.keyset
          ? {
              ':ceiling': c.keyset.ceiling,
              ':latest': c.keyset.latest,
              ':latestIds': [...c.keyset.latestIds],
            }
          : {}),
        ...(ending === undefined
          ? { ':handoff': { page: c.page + 1, at: c.now, sentAt: null } }
          : { ':ending': ending === 'idle' ? 'idle' : 'done' }),
      },
    },
  };
  if (ending === undefined) return [chain];
  return [chain, runEnding(tableName, c, ending, before ?? NO_COUNTS)];
}

/** The run item's side of a chain's last page. */
function runEnding(
  tableName: string,
  c: ChainCommit,
  ending: ChainEnding,
  before: ChainCounters,
): TransactItem {
  const partition = c.ref.partition !== undefined;
  // DynamoDB refuses a value no expression of its own action uses, so each action sends only
  // its own: `:one` exists only where a partition's count is touched or compared.
  const values = { ':running': 'running', ':epoch': c.epoch };
  const countsPartitions = partition || ending === 'last_open';
  if (ending === 'idle') {
    // The open window waits for its tail pass: only while another partition is open (this one
    // and at least one more), since the last other one to finish arms the tail pass.
    return {
      ConditionCheck: {
        TableName: tableName,
        Key: { runId: c.ref.runId },
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND openPartitions >= :two`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ...values, ':two': 2 },
      },
    };
  }
  return {
    Update: {
      TableName: tableName,
      Key: { runId: c.ref.runId },
      UpdateExpression: `SET ${[
        '#progress.#processed = #progress.#processed + :processed, #progress.#pages = #progress.#pages + :pages',
        'errorCount = errorCount + :errors, updatedAt = :now',
        'tombstoned = if_not_exists(tombstoned, :none) + :tombstoned, gone = if_not_exists(gone, :none) + :gone',
        'ahead = if_not_exists(ahead, :none) + :ahead',
        ...(partition ? ['openPartitions = openPartitions - :one'] : []),
      ].join(', ')}`,
      ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch}${ending === 'last_open' ? ' AND openPartitions = :one' : ''}`,
      ExpressionAttributeNames: {
        '#state': 'state',
        '#progress': 'progress',
        '#processed': 'processed',
        '#pages': 'pages',
      },
      ExpressionAttributeValues: {
        ...values,
        ':processed': before.processed + c.processed,
        ':pages': before.pages + 1,
        ':errors': before.errorCount + c.errors,
        ':none': 0,
        ':tombstoned': before.tombstoned + (c.tombstoned ?? 0),
        ':gone': before.gone + (c.gone ?? 0),
        ':ahead': before.ahead + (c.ahead ?? 0),
        ':now': c.now,
        ...(countsPartitions ? { ':one': 1 } : {}),
      },
    },
  };
}

/** A run's plan: its partitions' windows, and the total the source told. */
export interface PlannedChains {
  readonly runId: string;
  readonly epoch: number;
  readonly windows: readonly Partition['window'][];
  readonly total: number | null;
  readonly now: number;
}

/** The writes of a plan (see `ChainStore.plan`). */
export function planWrites(tableName: string, p: PlannedChains): TransactItem[] {
  const setTotal = p.total !== null;
  return [
    {
      Update: {
        TableName: tableName,
        Key: chainKey({ runId: p.runId }),
        // The plan's total is the source's own count of the listing: the run's outcome keeps it.
        UpdateExpression: `SET nextPage = :two, chainState = :done, heartbeatAt = :now${setTotal ? ', statedTotal = :stated' : ''} REMOVE handoff, deferredUntil`,
        ConditionExpression: `${CHAIN_LIVE} AND chainState = :running AND nextPage = :one`,
        ExpressionAttributeValues: {
          ':epoch': p.epoch,
          ':running': 'running',
          ':done': 'done',
          ':one': 1,
          ':two': 2,
          ':now': p.now,
          ...(setTotal ? { ':stated': p.total } : {}),
        },
      },
    },
    {
      Update: {
        TableName: tableName,
        Key: { runId: p.runId },
        UpdateExpression: `SET partitionCount = :count, openPartitions = :count, updatedAt = :now${setTotal ? ', #progress.#total = :total' : ''}`,
        ConditionExpression: `${RUN_CONDITIONS.runningAtEpoch} AND attribute_not_exists(partitionCount)`,
        ExpressionAttributeNames: {
          '#state': 'state',
          ...(setTotal ? { '#progress': 'progress', '#total': 'total' } : {}),
        },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':epoch': p.epoch,
          ':count': p.windows.length,
          ':now': p.now,
          ...(setTotal ? { ':total': p.total } : {}),
        },
      },
    },
    ...p.windows.map((window, partition) => ({
      Put: {
        TableName: tableName,
        Item: newChainItem({ runId: p.runId, partition }, p.epoch, p.now, window),
      },
    })),
  ];
}
