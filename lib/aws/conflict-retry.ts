import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** How many times a single-item write is sent at most while it keeps meeting transactions. */
export const WRITE_CONFLICT_ATTEMPTS = 5;

const SINGLE_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

/** Pause before attempt `attempt` (from 2): short and growing, as a transaction holds an item for milliseconds. */
export function conflictPause(attempt: number, random: () => number = Math.random): number {
  // Jittered, so writers that met the same transaction do not come back in step.
  return Math.round(20 * 2 ** (attempt - 1) * (0.5 + random() / 2));
}

/**
 * Sends a single-item write (PutItem, UpdateItem, DeleteItem) again when DynamoDB refused it with
 * `TransactionConflictException`: a transaction on the same item was in flight. DynamoDB wrote
 * nothing, and the SDK does not retry that error, so every heartbeat, claim, commit or lock write
 * would fail for a collision that is over a few milliseconds later. The write goes again
 * with its own condition, which judges the item as it is then: a refused condition keeps its
 * meaning. After {@link WRITE_CONFLICT_ATTEMPTS} the error is thrown as it is (a transient one).
 *
 * Installed on every DynamoDB client by `createAwsClients`, and with it on the document client
 * that shares its middleware stack.
 */
export function installConflictRetry(
  client: DynamoDBClient,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!SINGLE_WRITES.has((context as { commandName?: string }).commandName ?? '')) return next(args);
      for (let attempt = 1; ; attempt++) {
        try {
          return await next(args);
        } catch (error) {
          const conflict = error instanceof Error && error.name === 'TransactionConflictException';
          if (!conflict || attempt >= WRITE_CONFLICT_ATTEMPTS) throw error;
          await sleep(conflictPause(attempt + 1));
        }
      }
    },
    // First of all, so a pause holds nothing that serializes requests.
    { step: 'initialize', priority: 'high', name: 'harvesterConflictRetry' },
  );
}
