import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { transactionReasons } from './errors.js';

/** The items of one TransactWriteItems request. */
export type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/** How many times a transaction is sent at most, whatever made it go again. */
export const TRANSACTION_ATTEMPTS = 5;

/** One transaction as {@link transactWithRetry} sends it, perhaps more than once. */
export interface RetriedTransaction {
  /**
   * The items to send on this attempt (from 1). Built again for every attempt, so a writer whose
   * refusal said that what it read has moved can read again and send what it reads now.
   */
  items(attempt: number): TransactItems | Promise<TransactItems>;
  /**
   * A condition refused the transaction; `reasons` holds one code per item, in order. Throw the
   * error the caller should see (typically the store's named refusal), or return to build the
   * items again and send them once more.
   */
  refused(reasons: readonly (string | undefined)[], error: unknown, attempt: number): Promise<void>;
}

/**
 * Sends a transaction until it is written, a condition refuses it for good, or
 * {@link TRANSACTION_ATTEMPTS} attempts are spent. DynamoDB cancels a transaction that collides
 * with another one writing the same item (`TransactionConflict`: two partitions ending at once, a
 * run ending while a partition commits): nothing was written, so it is sent again after a short,
 * growing pause. Any other error is thrown as it is.
 */
export async function transactWithRetry(doc: DynamoDBDocumentClient, t: RetriedTransaction): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const items = await t.items(attempt);
    try {
      await doc.send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      const reasons = transactionReasons(error);
      if (!reasons) throw error;
      const refused = reasons.includes('ConditionalCheckFailed');
      if (!refused && !reasons.includes('TransactionConflict')) throw error;
      // A refusal is named even on the last attempt; only going again is bounded.
      if (refused) await t.refused(reasons, error, attempt);
      if (attempt >= TRANSACTION_ATTEMPTS) throw error;
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    }
  }
}
