import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { TRANSACTION_ATTEMPTS, transactWithRetry } from '../../lib/store/transact-retry.js';

/*
 * The emulator never reports a transaction conflict (it serialises transactions), so the retry
 * policy is judged here against the answers DynamoDB gives: a `TransactionCanceledException`
 * whose cancellation reasons name one code per item.
 */

function cancelled(...codes: string[]): Error {
  return Object.assign(new Error(`Transaction cancelled [${codes.join(', ')}]`), {
    name: 'TransactionCanceledException',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

/** A client that answers the transactions it is sent with `answers`, in order (undefined: written). */
function clientAnswering(answers: (Error | undefined)[]) {
  const sent: unknown[] = [];
  const doc = {
    send: async (command: { input: unknown }) => {
      sent.push(command.input);
      const answer = answers.shift();
      if (answer) throw answer;
      return {};
    },
  } as unknown as DynamoDBDocumentClient;
  return { doc, sent };
}

const item = { ConditionCheck: { TableName: 't', Key: { id: 'a' }, ConditionExpression: 'x' } };

describe('transactWithRetry', () => {
  it('sends a transaction that collided with another again, until it is written', async () => {
    const { doc, sent } = clientAnswering([cancelled('None', 'TransactionConflict'), undefined]);

    await transactWithRetry(doc, { items: () => [item], refused: async () => {} });

    expect(sent).toHaveLength(2);
  });

  it('gives up on conflicts after a bounded number of attempts, with the last error', async () => {
    const conflicts = Array.from({ length: TRANSACTION_ATTEMPTS + 2 }, () =>
      cancelled('TransactionConflict'),
    );
    const { doc, sent } = clientAnswering(conflicts);

    await expect(
      transactWithRetry(doc, { items: () => [item], refused: async () => {} }),
    ).rejects.toMatchObject({
      name: 'TransactionCanceledException',
    });
    expect(sent).toHaveLength(TRANSACTION_ATTEMPTS);
  });

  it('hands a refused condition to the writer, which names it or builds the items again', async () => {
    const named = new Error('run fenced');
    const { doc, sent } = clientAnswering([
      cancelled('None', 'ConditionalCheckFailed'),
      cancelled('ConditionalCheckFailed'),
    ]);
    const built: number[] = [];
    const seen: (string | undefined)[][] = [];

    const result = transactWithRetry(doc, {
      items: (attempt) => {
        built.push(attempt);
        return [item];
      },
      refused: async (reasons, _error, attempt) => {
        seen.push([...reasons]);
        if (attempt === 2) throw named;
      },
    });

    await expect(result).rejects.toBe(named);
    expect(built).toEqual([1, 2]);
    expect(seen).toEqual([['None', 'ConditionalCheckFailed'], ['ConditionalCheckFailed']]);
    expect(sent).toHaveLength(2);
  });

  it('throws any other error at once', async () => {
    const throttled = Object.assign(new Error('slow down'), {
      name: 'ProvisionedThroughputExceededException',
    });
    const { doc, sent } = clientAnswering([throttled]);

    await expect(transactWithRetry(doc, { items: () => [item], refused: async () => {} })).rejects.toBe(
      throttled,
    );
    expect(sent).toHaveLength(1);
  });
});
