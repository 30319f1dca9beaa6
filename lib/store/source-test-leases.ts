import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './errors.js';

/**
 * Leases on a source's connection checks (`POST /sources/{id}/test`): at most
 * {@link MAX_CONCURRENT_SOURCE_TESTS} run at once per source, however many API function instances
 * answer them. Lambdas share no memory, so the count lives in DynamoDB, in the rate budgets table
 * beside the source's request budgets: one record per slot (`source-test#<sourceId>#<n>`), taken
 * by a conditional put that succeeds only on a free or lapsed slot and given back by a put that
 * succeeds only for its holder. A check that dies holding a slot frees it when the lease lapses,
 * a few seconds later; DynamoDB's TTL removes the records of idle sources.
 */

/** Connection checks of one source that may run at once; the next is answered 429. */
export const MAX_CONCURRENT_SOURCE_TESTS = 2;

/** A slot a check holds. */
export interface SourceTestLease {
  readonly key: string;
  readonly leaseId: string;
}

/** How long after its lease lapses a slot's record may be deleted by TTL. */
const IDLE_TTL_SECONDS = 24 * 60 * 60;

/** The slots of connection checks per source (see the module documentation). */
export class SourceTestLeases {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly slots = MAX_CONCURRENT_SOURCE_TESTS,
  ) {}

  /**
   * Takes a free slot of `sourceId` until `now + holdMs`, or answers undefined when every slot
   * is held. `holdMs` is the longest the check can take, so a lapsed slot is a check that is over.
   */
  async acquire(
    sourceId: string,
    leaseId: string,
    now: number,
    holdMs: number,
  ): Promise<SourceTestLease | undefined> {
    for (let slot = 0; slot < this.slots; slot++) {
      const key = `source-test#${sourceId}#${slot}`;
      try {
        await this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: record(key, sourceId, leaseId, now + holdMs, now),
            // Free (never taken, or given back: leaseUntil 0) or lapsed: a check past its bound is over.
            ConditionExpression: 'attribute_not_exists(credentialId) OR leaseUntil < :now',
            ExpressionAttributeValues: { ':now': now },
          }),
        );
        return { key, leaseId };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    return undefined;
  }

  /** Gives the slot back; a slot already retaken after its lease lapsed is left to its new holder. */
  async release(lease: SourceTestLease, sourceId: string, now: number): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: record(lease.key, sourceId, lease.leaseId, 0, now),
          ConditionExpression: 'leaseId = :leaseId',
          ExpressionAttributeValues: { ':leaseId': lease.leaseId },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

function record(key: string, sourceId: string, leaseId: string, leaseUntil: number, now: number) {
  return {
    credentialId: key,
    kind: 'source-test',
    sourceId,
    leaseId,
    leaseUntil,
    expiresAt: Math.ceil(Math.max(leaseUntil, now) / 1_000) + IDLE_TTL_SECONDS,
  };
}
