import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ResumeRecord, RunFailure, SyncRun } from '../run/model.js';
import { chainRefsOfItem, readChains } from './chain-reads.js';
import type { DeadLetterStore } from './dead-letters.js';
import { LockNotHeldError, RunNotFoundError, RunStateError } from './errors.js';
import { endWrites, partitionGuard } from './run-chains.js';
import { toSyncRun } from './run-item.js';
import { chainPositions, outcomeOf, outcomeUpdate, withSets } from './run-outcome.js';
import { SourceStore, type SourceWatermark } from './sources.js';
import { type NewRun, SyncRunStore } from './sync-runs.js';
import { type TransactItems, transactWithRetry } from './transact-retry.js';

type RunUpdate = ReturnType<typeof SyncRunStore.cancelUpdate> | ReturnType<typeof SyncRunStore.finishUpdate>;

/** How a run ends. */
export interface RunEnding {
  readonly runId: string;
  readonly sourceId: string;
  /** The finishing worker's epoch; null for an operator or reaper decision that is not fenced by epoch. */
  readonly epoch: number | null;
  readonly state: 'succeeded' | 'failed';
  readonly failure?: RunFailure;
  readonly resume?: ResumeRecord;
  /** New source watermark with its stream (on success only). */
  readonly watermark?: SourceWatermark;
  readonly now: number;
}

/**
 * The writes that span a run and its source: taking the lock with the run's creation, and
 * releasing it with the run's end, each in one transaction. There is no moment at which a lock
 * is held by a run that does not exist or has ended, so a crash between two writes cannot leave
 * a source locked forever.
 */
export class RunLifecycle {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly runs: SyncRunStore,
    readonly sources: SourceStore,
    /** Counts the dead letters a run filed, for the outcome its end fixes. */
    private readonly deadLetters: Pick<DeadLetterStore, 'countFiledBy'>,
  ) {}

  /** Creates the queued run and takes its source's lock; {@link SourceBusyError} names the active run. */
  async createHoldingLock(run: NewRun): Promise<SyncRun> {
    // A collision with another transaction on the source (a run ending, another start) wrote
    // nothing: it goes again, and then either takes the lock or meets the holder's refusal.
    await transactWithRetry(this.doc, {
      items: () => [
        { Update: SourceStore.acquireUpdate(this.sources.tableName, run.sourceId, run.runId, run.now) },
        ...SyncRunStore.newItems(this.runs.tableName, run),
      ],
      refused: async (reasons, error) => {
        if (reasons[0] === 'ConditionalCheckFailed')
          throw await this.sources.explainLockRefusal(run.sourceId, error);
        throw error;
      },
    });
    return this.runs.require(run.runId);
  }

  /**
   * Ends the run and releases the lock (committing the watermark on success) in one
   * transaction, which also marks every chain of the run ended. If the run's own condition fails
   * the store's error says why (fenced, cancelled, already ended). If only the lock was not held —
   * it should always be — the run still ends. The same write fixes the run's outcome.
   */
  async finish(ending: RunEnding): Promise<void> {
    await this.end(
      ending.runId,
      ending.sourceId,
      { epoch: ending.epoch ?? undefined },
      SyncRunStore.finishUpdate(ending.runId, ending),
      SourceStore.releaseUpdate(
        this.sources.tableName,
        ending.sourceId,
        ending.runId,
        ending.state === 'succeeded' ? ending.watermark : undefined,
      ),
      ending.now,
      ending.state === 'succeeded',
    );
  }

  /** Cancels an active run and releases its lock. Terminal runs fail with the store's error (409 at the API). */
  async cancel(runId: string, now: number): Promise<SyncRun> {
    const run = await this.runs.get(runId);
    if (!run) throw new RunNotFoundError(`run ${runId} not found`, { runId });
    await this.end(
      runId,
      run.sourceId,
      {},
      SyncRunStore.cancelUpdate(runId, now),
      SourceStore.releaseUpdate(this.sources.tableName, run.sourceId, runId),
      now,
    );
    return this.runs.require(runId);
  }

  /**
   * One end of a run: the run item's update with the run's outcome, the lock's release and every
   * chain's end mark. The chains are those the run item names, and the update is conditioned on
   * the run still having them (a plan that added partitions meanwhile makes it read and try
   * again), at the epoch and chain positions the outcome was built from (a commit or a fence in
   * between makes it read again). A lock that was not held (it should always be) is left out on
   * the next attempt rather than stop the end.
   */
  private async end(
    runId: string,
    sourceId: string,
    expected: { epoch?: number | undefined },
    update: RunUpdate,
    release: ReturnType<typeof SourceStore.releaseUpdate>,
    now: number,
    succeeded = false,
  ): Promise<void> {
    let withRelease = true;
    // Every filing of the run precedes the commit (or the failure) that ends it, and its source's
    // lock keeps other runs off its entries: counted once, before the transaction's attempts.
    const deadLetters = await this.deadLetters.countFiledBy(sourceId, runId);
    await transactWithRetry(this.doc, {
      items: async () => {
        const { Item } = await this.doc.send(
          new GetCommand({ TableName: this.runs.tableName, Key: { runId }, ConsistentRead: true }),
        );
        const refs = Item ? chainRefsOfItem(Item) : [];
        const chains = (await readChains(this.doc, this.runs.tableName, refs)).get(runId) ?? [];
        const guard = partitionGuard((Item?.partitionCount ?? 0) as number);
        const run = Item ? toSyncRun(Item, chains) : undefined;
        const fixed = run ? outcomeUpdate(run, outcomeOf(run, chains, deadLetters), succeeded) : undefined;
        const items: TransactItems = [
          {
            Update: {
              TableName: this.runs.tableName,
              ...update,
              UpdateExpression: withSets(update.UpdateExpression, fixed?.set ?? ''),
              ConditionExpression: `${update.ConditionExpression} AND ${guard.condition}${fixed?.condition ?? ''}`,
              ExpressionAttributeNames: { ...update.ExpressionAttributeNames, ...fixed?.names },
              ExpressionAttributeValues: {
                ...update.ExpressionAttributeValues,
                ...guard.values,
                ...fixed?.values,
              },
            },
          },
          ...(withRelease ? [{ Update: release }] : []),
          ...endWrites(this.runs.tableName, refs, now, chainPositions(chains)),
        ];
        return items;
      },
      refused: async (reasons, error, attempt) => {
        if (reasons[0] === 'ConditionalCheckFailed') {
          const refusal = await this.runs.explainRefusal(runId, expected, error);
          // Still active at that epoch: what the end was built from (the partitions, the epoch) moved; read again.
          if (!(refusal instanceof RunStateError) || attempt >= 3) throw refusal;
          return;
        }
        const lockMissing = withRelease && reasons[1] === 'ConditionalCheckFailed';
        // A chain committed a page after the read: the outcome would miss it; read again.
        const chainMoved = reasons.slice(withRelease ? 2 : 1).includes('ConditionalCheckFailed');
        if (!lockMissing && !chainMoved) throw error;
        if (lockMissing) withRelease = false;
      },
    });
  }

  /** Releases a lock whose holder already ended (repair path used by the reaper). */
  async releaseIfHeldBy(sourceId: string, runId: string): Promise<boolean> {
    try {
      await this.sources.releaseLock(sourceId, runId);
      return true;
    } catch (error) {
      if (error instanceof LockNotHeldError) return false;
      throw error;
    }
  }
}
