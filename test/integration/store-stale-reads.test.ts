import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { Entity } from '../../lib/connectors/contract.js';
import type { FailureRecord } from '../../lib/store/dead-letter-model.js';
import { DeadLetterStore } from '../../lib/store/dead-letters.js';
import { ItemStore } from '../../lib/store/items.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { type FaultyAws, withDynamoFaults } from '../support/dynamo-faults.js';

/**
 * The store's deciding reads while every eventually consistent read lags (the fault layer at
 * chance 1, a window longer than each test): each decision below is made right after the write it
 * must see, and a read that lagged would decide wrong. docs/consistency.md lists every read.
 */
let aws: TestAws;
let faulty: FaultyAws;
let deadLetters: DeadLetterStore;
let items: ItemStore;
const STALE = { seed: 21, staleRead: 1, staleMs: 30_000 };

beforeAll(async () => {
  aws = await setUpTestAws('stale');
  faulty = await withDynamoFaults(aws, STALE);
  deadLetters = new DeadLetterStore(faulty.clients.doc, aws.names.deadLettersTable);
  items = new ItemStore(faulty.clients.doc, aws.names.itemsTable);
});
afterAll(() => {
  destroyAwsClients(aws.clients);
  destroyAwsClients(faulty.clients);
  faulty.faults.destroy();
});

const failure = (sourceId: string, ref: string, now = 1_000): FailureRecord => ({
  sourceId,
  kind: 'item',
  ref,
  errorClass: 'transient',
  reason: 'HTTP 503',
  attempts: 3,
  runId: 'run-a',
  page: 1,
  now,
});
const entity = (id: string): Entity => ({ id, version: '2026-01-01T00:00:00Z', data: { title: id } });

describe('dead letters', () => {
  it('a run start sees an item entry filed a moment ago', async () => {
    const sourceId = `src-${ulid()}`;
    await deadLetters.record(failure(sourceId, 'e1'));
    expect(await deadLetters.hasOpenItems(sourceId)).toBe(true);
  });

  it('a load resolves an entry filed a moment ago', async () => {
    const sourceId = `src-${ulid()}`;
    const entryId = await deadLetters.record(failure(sourceId, 'e1'));
    expect(await deadLetters.resolveLoaded(sourceId, ['e1'], 2_000)).toEqual([entryId]);
    expect(await deadLetters.get(sourceId, entryId)).toBeUndefined();
  });

  it("a retry run's slice lists an entry filed a moment ago", async () => {
    const sourceId = `src-${ulid()}`;
    const entryId = await deadLetters.record(failure(sourceId, 'e1'));
    const slice = await deadLetters.list(sourceId, { limit: 10, cursor: null, failedBefore: 5_000 });
    expect(slice.items.map((entry) => entry.entryId)).toEqual([entryId]);
  });

  it("a filtered retry run's slice (by run, consistent) lists an entry filed a moment ago", async () => {
    const sourceId = `src-${ulid()}`;
    const entryId = await deadLetters.record(failure(sourceId, 'e1'));
    await deadLetters.record({ ...failure(sourceId, 'e2'), runId: 'run-b' });
    const slice = await deadLetters.list(sourceId, {
      limit: 10,
      cursor: null,
      failedBefore: 5_000,
      runId: 'run-a',
      errorClass: 'transient',
      consistent: true,
    });
    expect(slice.items.map((entry) => entry.entryId)).toEqual([entryId]);
  });
});

describe('items read first', () => {
  it('a page that reads an entity tombstoned a moment ago refreshes it rather than skip it as unchanged', async () => {
    const sourceId = `src-${ulid()}`;
    // Stored long ago (not through the layer, which then lags only behind the tombstone).
    await new ItemStore(aws.clients.doc, aws.names.itemsTable).load(sourceId, entity('e1'), 'run-1', 1, 1);
    expect(await items.tombstone(sourceId, 'e1', 'recon-1', 10)).toBe(true);
    const [result] = await items.loadAll(sourceId, [entity('e1')], 'run-2', 20, 1, undefined, {
      skipUnchanged: true,
    });
    expect(result).toEqual({ entityId: 'e1', status: 'written', changed: false });
    expect(await items.get(sourceId, 'e1')).toMatchObject({ lastSeenRunId: 'run-2', syncedAt: 20 });
  });
});

describe('the layer', () => {
  it('lags an eventually consistent read of the same writes', async () => {
    // The reads above are consistent, so nothing lagged; the same read without it does.
    expect(faulty.faults.counts.staleReads).toBe(0);
    const sourceId = `src-${ulid()}`;
    await deadLetters.record(failure(sourceId, 'e1'));
    const { Items } = await faulty.clients.doc.send(
      new QueryCommand({
        TableName: aws.names.deadLettersTable,
        KeyConditionExpression: 'sourceId = :s',
        ExpressionAttributeValues: { ':s': sourceId },
      }),
    );
    expect(Items).toEqual([]);
    expect(faulty.faults.counts.staleReads).toBe(1);
  });
});
