import { describe, expect, it } from 'vitest';
import { Billing, readUnits, sqsChunks, writeUnits } from '../../bench/billing.js';
import { costPerMillion, type RequestsPerPage } from '../../bench/cost.js';
import { itemBytes, numberBytes } from '../../bench/item-size.js';

const TABLE = 'bench-x-items';
const key = { sourceId: 's', entityId: 'e-1' };

describe('DynamoDB item size', () => {
  it('counts attribute names and values by type', () => {
    // "a" 1 + "héllo" 6; "n" 1 + 12345 → 3 digits pairs + 1 = 4; "b" 1 + true 1
    expect(itemBytes({ a: 'héllo', n: 12345, b: true })).toBe(1 + 6 + 1 + 4 + 1 + 1);
    // a map: 3 + per element 1 + name + value
    expect(itemBytes({ m: { x: 'yz' } })).toBe(1 + 3 + 1 + 1 + 2);
    expect(itemBytes({ l: ['a', 'b'] })).toBe(1 + 3 + 2 * (1 + 1));
  });

  it('sizes marshalled items the same as plain ones', () => {
    const plain = { a: 'héllo', n: 12345, m: { x: 'yz' }, l: ['a', 'b'] };
    const marshalled = {
      a: { S: 'héllo' },
      n: { N: '12345' },
      m: { M: { x: { S: 'yz' } } },
      l: { L: [{ S: 'a' }, { S: 'b' }] },
    };
    expect(itemBytes(marshalled, true)).toBe(itemBytes(plain));
  });

  it('counts a number by its significant digits', () => {
    expect(numberBytes('1700000000000')).toBe(2);
    expect(numberBytes('-12.5')).toBe(3);
  });
});

describe('billed units', () => {
  it('rounds writes up per KB, reads per 4 KB (halved when eventually consistent), SQS per 64 KB', () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1_025)).toBe(2);
    expect(readUnits(4_097, true)).toBe(2);
    expect(readUnits(100, false)).toBe(0.5);
    expect(sqsChunks(64 * 1_024 + 1)).toBe(2);
  });

  it('bills an update the larger of the item before and after, and a refused write the stored item', () => {
    const billing = new Billing();
    const big = { ...key, body: 'x'.repeat(2_000) };
    // First store: nothing before, 2 KB after.
    expect(
      billing.bill(
        'DynamoDB.UpdateItem',
        { TableName: TABLE, Key: key, ReturnValues: 'ALL_NEW' },
        { Attributes: big },
        undefined,
      ),
    ).toBe(2);
    // Shrinking it bills the 2 KB before.
    expect(
      billing.bill(
        'DynamoDB.UpdateItem',
        { TableName: TABLE, Key: key, ReturnValues: 'ALL_NEW' },
        { Attributes: key },
        undefined,
      ),
    ).toBe(2);
    // A refused conditional write bills the stored item it returned (marshalled), at least 1.
    const refused = Object.assign(new Error('refused'), {
      name: 'ConditionalCheckFailedException',
      Item: { sourceId: { S: 's' }, entityId: { S: 'e-1' }, body: { S: 'x'.repeat(3_000) } },
    });
    expect(billing.bill('DynamoDB.UpdateItem', { TableName: TABLE, Key: key }, undefined, refused)).toBe(3);
  });

  it('bills a projected read by the whole item it knows, BatchGetItem per item, and transactions twice', () => {
    const billing = new Billing();
    billing.bill(
      'DynamoDB.UpdateItem',
      { TableName: TABLE, Key: key, ReturnValues: 'ALL_NEW' },
      { Attributes: { ...key, body: 'x'.repeat(5_000) } },
      undefined,
    );
    const batch = (consistent: boolean) =>
      billing.bill(
        'DynamoDB.BatchGetItem',
        {
          RequestItems: {
            [TABLE]: { Keys: [key, { sourceId: 's', entityId: 'e-2' }], ConsistentRead: consistent },
          },
        },
        { Responses: { [TABLE]: [{ ...key, version: '1' }] } },
        undefined,
      );
    // e-1: 5 KB → 2 read units; e-2 not found: the minimum 1; halved when eventually consistent.
    expect(batch(true)).toBe(3);
    expect(batch(false)).toBe(1.5);
    const transaction = billing.bill(
      'DynamoDB.TransactWriteItems',
      {
        TransactItems: [
          { Put: { TableName: 'runs', Item: { runId: 'r', x: 'y' } } },
          { ConditionCheck: { TableName: TABLE, Key: key } },
        ],
      },
      {},
      undefined,
    );
    expect(transaction).toBe(2 * 1 + 2 * 5);
  });

  it('bills a count by the items it counted, though it returns none', () => {
    const billing = new Billing();
    for (let i = 1; i <= 4; i++) {
      billing.bill(
        'DynamoDB.UpdateItem',
        { TableName: TABLE, Key: { sourceId: 's', entityId: `e-${i}` }, ReturnValues: 'ALL_NEW' },
        { Attributes: { sourceId: 's', entityId: `e-${i}`, body: 'x'.repeat(4_000) } },
        undefined,
      );
    }
    // 1,000 items of ~4 KB counted, eventually consistent: ~1,000 × 4 KB / 4 KB / 2.
    const count = { TableName: TABLE, Select: 'COUNT' };
    const units = billing.bill('DynamoDB.Query', count, { Count: 1_000, ScannedCount: 1_000 }, undefined);
    expect(units).toBeGreaterThan(490);
    expect(units).toBeLessThan(520);
    expect(billing.bill('DynamoDB.Query', count, { Count: 0, ScannedCount: 0 }, undefined)).toBe(0.5);
  });

  it('asks for the return values it needs only when the caller did not', () => {
    const billing = new Billing();
    expect(billing.prepare('DynamoDB.UpdateItem', { TableName: TABLE }).input.ReturnValues).toBe('ALL_NEW');
    const own = billing.prepare('DynamoDB.UpdateItem', { TableName: TABLE, ReturnValues: 'UPDATED_OLD' });
    expect(own.input.ReturnValues).toBe('UPDATED_OLD');
    expect(own.strip).toEqual([]);
  });
});

describe('pricing the counted units', () => {
  const perPage = (unitsByOperation: Record<string, number>): RequestsPerPage => ({
    pages: 1,
    entitiesPerPage: 100,
    byOperation: {},
    itemWrites: 0,
    itemReads: 0,
    controlPlane: 0,
    controlPlaneEngineOnly: 0,
    controlPlaneEventSourceMapping: 0,
    total: 0,
    unitsByOperation,
    refusedByOperation: {},
    excludedTotals: {},
    note: '',
  });

  it('prices an operation the counter qualified (`BatchGetItem(Items)`, `Query(COUNT)`) as its command', () => {
    // 10,000 pages a million entities; 8 RRU a page at $0.125 per million.
    for (const op of ['DynamoDB.BatchGetItem(Items)', 'DynamoDB.Query(COUNT)', 'DynamoDB.GetItem']) {
      expect(costPerMillion(perPage({ [op]: 8 }), 0, 0).byService.dynamodb).toBe(0.01);
    }
    expect(costPerMillion(perPage({ 'DynamoDB.UpdateItem(Items)': 1 }), 0, 0).byService.dynamodb).toBe(
      0.0063,
    );
  });
});
