import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { ResumeRecord, RunFailure, SyncRun } from '../run/model.js';
import { LockNotHeldError, RunNotFoundError, transactionReasons } from './errors.js';
import { SourceStore, type SourceWatermark } from './sources.js';
import { type NewRun, SyncRunStore } from './sync-runs.js';

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
  ) {}

  /** Creates the queued run and takes its source's lock; {@link SourceBusyError} names the active run. */
  async createHoldingLock(run: NewRun): Promise<SyncRun> {
    const item = SyncRunStore.newItem(run);
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: SourceStore.acquireUpdate(this.sources.tableName, run.sourceId, run.runId, run.now) },
            {
              Put: {
                TableName: this.runs.tableName,
                Item: item,
                ConditionExpression: 'attribute_not_exists(runId)',
              },
            },
          ],
        }),
      );
    } catch (error) {
      const reasons = transactionReasons(error);
      if (reasons?.[0] === 'ConditionalCheckFailed')
        throw await this.sources.explainLockRefusal(run.sourceId, error);
      throw error;
    }
    return this.runs.require(run.runId);
  }

  /**
   * Ends the run and releases the lock (committing the watermark on success) in one
   * transaction. If the run's own condition fails the store's error says why (fenced, cancelled,
   * already ended). If only the lock was not held — it should always be — the run still ends.
   */
  async finish(ending: RunEnding): Promise<void> {
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: { TableName: this.runs.tableName, ...SyncRunStore.finishUpdate(ending.runId, ending) },
            },
            {
              Update: SourceStore.releaseUpdate(
                this.sources.tableName,
                ending.sourceId,
                ending.runId,
                ending.state === 'succeeded' ? ending.watermark : undefined,
              ),
            },
          ],
        }),
      );
    } catch (error) {
      const reasons = transactionReasons(error);
      if (!reasons) throw error;
      if (reasons[0] === 'ConditionalCheckFailed') {
        throw await this.runs.explainRefusal(ending.runId, { epoch: ending.epoch ?? undefined }, error);
      }
      if (reasons[1] === 'ConditionalCheckFailed') {
        await this.runs.finish(ending.runId, ending);
        return;
      }
      throw error;
    }
  }

  /** Cancels an active run and releases its lock. Terminal runs fail with the store's error (409 at the API). */
  async cancel(runId: string, now: number): Promise<SyncRun> {
    const run = await this.runs.get(runId);
    if (!run) throw new RunNotFoundError(`run ${runId} not found`, { runId });
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { TableName: this.runs.tableName, ...SyncRunStore.cancelUpdate(runId, now) } },
            { Update: SourceStore.releaseUpdate(this.sources.tableName, run.sourceId, runId) },
          ],
        }),
      );
    } catch (error) {
      const reasons = transactionReasons(error);
      if (!reasons) throw error;
      if (reasons[0] === 'ConditionalCheckFailed') throw await this.runs.explainRefusal(runId, {}, error);
      if (reasons[1] === 'ConditionalCheckFailed') await this.runs.cancel(runId, now);
      else throw error;
    }
    return this.runs.require(runId);
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
