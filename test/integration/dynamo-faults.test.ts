import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { WRITE_CONFLICT_ATTEMPTS } from '../../lib/aws/conflict-retry.js';
import { INDEX } from '../../lib/resources/definitions.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { type FaultyAws, withDynamoFaults } from '../support/dynamo-faults.js';

let aws: TestAws;
let faulty: FaultyAws;
let table: string;

beforeAll(async () => {
  aws = await setUpTestAws('faults');
  faulty = await withDynamoFaults(aws, { seed: 1 });
  table = aws.names.syncRunsTable;
});
afterAll(() => {
  destroyAwsClients(aws.clients);
  destroyAwsClients(faulty.clients);
  faulty.faults.destroy();
});

const stored = async (runId: string) =>
  (await aws.clients.doc.send(new GetCommand({ TableName: table, Key: { runId }, ConsistentRead: true })))
    .Item;

const put = (runId: string, extra: Record<string, unknown> = {}) => ({
  Put: { TableName: table, Item: { runId, ...extra } },
});

describe('transaction conflicts', () => {
  it('cancels a transaction as DynamoDB does, one reason per action, and writes nothing', async () => {
    faulty.faults.set({ seed: 3, transactionConflict: 1, limit: 1 });
    const before = faulty.faults.counts.transactionConflicts;
    const [a, b, c] = [ulid(), ulid(), ulid()];
    const error = await faulty.clients.doc
      .send(new TransactWriteCommand({ TransactItems: [put(a), put(b), put(c)] }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    const codes = (error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code);
    expect(codes).toHaveLength(3);
    expect(codes?.filter((code) => code === 'TransactionConflict')).toHaveLength(1);
    expect(codes?.filter((code) => code === 'None')).toHaveLength(2);
    expect(faulty.faults.counts.transactionConflicts).toBe(before + 1);
    expect(await stored(a)).toBeUndefined();
    // The limit is spent: the same transaction now goes through.
    await faulty.clients.doc.send(new TransactWriteCommand({ TransactItems: [put(a), put(b), put(c)] }));
    expect(await stored(a)).toEqual({ runId: a });
  });

  it('refuses a single-item write by chance, and the client sends it again until it is written', async () => {
    faulty.faults.set({ seed: 3, writeConflict: 1, limit: 2 });
    const before = faulty.faults.counts.writeConflicts;
    const runId = ulid();
    await faulty.clients.doc.send(new PutCommand({ TableName: table, Item: { runId, n: 1 } }));
    expect(faulty.faults.counts.writeConflicts).toBe(before + 2);
    expect(await stored(runId)).toEqual({ runId, n: 1 });
  });

  it('gives a write that keeps meeting conflicts up after a bounded number of attempts', async () => {
    faulty.faults.set({ seed: 3, writeConflict: 1 });
    const before = faulty.faults.counts.writeConflicts;
    const runId = ulid();
    const error = await faulty.clients.doc
      .send(new PutCommand({ TableName: table, Item: { runId } }))
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('TransactionConflictException');
    expect(faulty.faults.counts.writeConflicts).toBe(before + WRITE_CONFLICT_ATTEMPTS);
    expect(await stored(runId)).toBeUndefined();
  });

  it('refuses a single-item write on an item a transaction in flight holds, then writes it', async () => {
    // Stale reads on: the transaction reads its items' earlier states first, holding them meanwhile.
    faulty.faults.set({ seed: 3, staleRead: 0.0001 });
    const before = faulty.faults.counts.inFlightConflicts;
    const runId = ulid();
    const transaction = faulty.clients.doc.send(
      new TransactWriteCommand({ TransactItems: [put(runId, { by: 'transaction' }), put(ulid())] }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    const write = faulty.clients.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { runId },
        UpdateExpression: 'SET single = :yes',
        ExpressionAttributeValues: { ':yes': true },
      }),
    );
    await Promise.all([transaction, write]);
    expect(faulty.faults.counts.inFlightConflicts).toBeGreaterThan(before);
    expect(await stored(runId)).toEqual({ runId, by: 'transaction', single: true });
  });

  it('draws the same faults from the same seed', async () => {
    const outcomes = async () => {
      faulty.faults.set({ seed: 42, transactionConflict: 0.5 });
      const results: boolean[] = [];
      for (let i = 0; i < 12; i++)
        results.push(
          await faulty.clients.doc.send(new TransactWriteCommand({ TransactItems: [put(ulid())] })).then(
            () => true,
            () => false,
          ),
        );
      return results;
    };
    const first = await outcomes();
    expect(first).toContain(true);
    expect(first).toContain(false);
    expect(await outcomes()).toEqual(first);
  });
});

describe('stale reads', () => {
  const STALE_MS = 400;
  const write = (runId: string, n: number) =>
    faulty.clients.doc.send(
      new PutCommand({ TableName: table, Item: { runId, n, sourceId: 'stale-src', activeShard: 'x' } }),
    );
  const read = (runId: string, consistent: boolean) =>
    faulty.clients.doc
      .send(new GetCommand({ TableName: table, Key: { runId }, ConsistentRead: consistent }))
      .then(({ Item }) => Item?.n as number | undefined);

  it('answers an eventually consistent read with the state before a recent write, a consistent one with the latest', async () => {
    faulty.faults.set({ seed: 5, staleRead: 1, staleMs: STALE_MS });
    const runId = ulid();
    await write(runId, 1);
    await new Promise((resolve) => setTimeout(resolve, STALE_MS + 50));
    await write(runId, 2);
    const before = faulty.faults.counts.staleReads;
    expect(await read(runId, false)).toBe(1);
    expect(await read(runId, true)).toBe(2);
    expect(faulty.faults.counts.staleReads).toBe(before + 1);
    await new Promise((resolve) => setTimeout(resolve, STALE_MS + 50));
    expect(await read(runId, false)).toBe(2);
  });

  it('hides a just-created item from eventually consistent reads, batch reads included', async () => {
    faulty.faults.set({ seed: 5, staleRead: 1, staleMs: STALE_MS });
    const runId = ulid();
    await write(runId, 1);
    expect(await read(runId, false)).toBeUndefined();
    const batch = (consistent: boolean) =>
      faulty.clients.doc.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: [{ runId }], ConsistentRead: consistent } } }),
      );
    expect((await batch(false)).Responses?.[table]).toEqual([]);
    expect((await batch(true)).Responses?.[table]).toEqual([
      { runId, n: 1, sourceId: 'stale-src', activeShard: 'x' },
    ]);
  });

  it('answers a query of a secondary index with earlier states, even when asked for consistency', async () => {
    faulty.faults.set({ seed: 5, staleRead: 1, staleMs: STALE_MS });
    const sourceId = `src-${ulid()}`;
    const [old, fresh] = [ulid(), ulid()];
    await faulty.clients.doc.send(new PutCommand({ TableName: table, Item: { runId: old, sourceId, n: 1 } }));
    await new Promise((resolve) => setTimeout(resolve, STALE_MS + 50));
    await faulty.clients.doc.send(new PutCommand({ TableName: table, Item: { runId: old, sourceId, n: 2 } }));
    await faulty.clients.doc.send(
      new PutCommand({ TableName: table, Item: { runId: fresh, sourceId, n: 1 } }),
    );
    const { Items } = await faulty.clients.doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: INDEX.runsBySource,
        KeyConditionExpression: 'sourceId = :s',
        ExpressionAttributeValues: { ':s': sourceId },
      }),
    );
    expect(Items).toEqual([{ runId: old, sourceId, n: 1 }]);
  });

  it('leaves reads alone while no stale reads are planned', async () => {
    faulty.faults.set({ seed: 5 });
    const runId = ulid();
    await write(runId, 1);
    expect(await read(runId, false)).toBe(1);
  });
});

describe('lost answers', () => {
  it('applies a single-item write and answers it with a 500; the SDK sends it again, and a condition meets its own write', async () => {
    faulty.faults.set({ seed: 5, lostAnswer: 1, limit: 1 });
    const before = faulty.faults.counts.lostAnswers;
    const runId = ulid();
    const create = new PutCommand({
      TableName: table,
      Item: { runId, n: 1 },
      ConditionExpression: 'attribute_not_exists(runId)',
    });

    const error = await faulty.clients.doc.send(create).catch((e: unknown) => e);

    expect((error as Error).name).toBe('ConditionalCheckFailedException');
    expect(faulty.faults.counts.lostAnswers).toBe(before + 1);
    expect(await stored(runId)).toEqual({ runId, n: 1 });
  });

  it('shows the 500 itself to a client that makes one attempt, the write applied', async () => {
    const once = await withDynamoFaults(aws, { seed: 6, lostAnswer: 1, limit: 1 }, 1);
    try {
      const runId = ulid();
      const error = await once.clients.doc
        .send(
          new UpdateCommand({
            TableName: table,
            Key: { runId },
            UpdateExpression: 'SET n = :n',
            ExpressionAttributeValues: { ':n': 2 },
          }),
        )
        .catch((e: unknown) => e);

      expect(error).toMatchObject({ name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      expect(await stored(runId)).toEqual({ runId, n: 2 });
    } finally {
      destroyAwsClients(once.clients);
      once.faults.destroy();
    }
  });

  it('leaves transactions alone: DynamoDB answers a repeat of an applied one (same ClientRequestToken) as a success', async () => {
    faulty.faults.set({ seed: 7, lostAnswer: 1 });
    const before = faulty.faults.counts.lostAnswers;
    const runId = ulid();

    await faulty.clients.doc.send(new TransactWriteCommand({ TransactItems: [put(runId)] }));

    expect(faulty.faults.counts.lostAnswers).toBe(before);
    faulty.faults.set({ seed: 1 });
  });
});
