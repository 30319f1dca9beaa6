import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { BuildMiddleware } from '@smithy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { Entity } from '../../lib/connectors/contract.js';
import { RequestRefusedError } from '../../lib/store/errors.js';
import { ItemStore } from '../../lib/store/items.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

/*
 * What an item write DynamoDB refuses becomes: a refusal of the item's contents (its size, its
 * nesting, its key, its numbers) dead-letters that entity alone; a refusal of the request's shape
 * is a defect in the code and fails the whole page.
 */

let aws: TestAws;
let items: ItemStore;
/** What the next UpdateItem meets on its way out, set by each test. */
let tamper: 'none' | 'unused_value' | 'size_refusal' = 'none';

const entities = (count: number): Entity[] =>
  Array.from({ length: count }, (_, i) => ({ id: `e${i}`, version: '2026-01-01T00:00:00Z', data: { i } }));

/**
 * Runs on the wire request before the strict layer (higher priority in the same step): adds an
 * unused expression value, or answers as DynamoDB does for an update that would outgrow 400 KB.
 */
const tampering: BuildMiddleware<object, object> = (next) => async (args) => {
  const request = args.request as { headers: Record<string, string>; body: unknown };
  if (!String(request.headers['x-amz-target']).endsWith('.UpdateItem')) return next(args);
  if (tamper === 'size_refusal') {
    throw new DynamoDBServiceException({
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'Item size to update has exceeded the maximum allowed size',
    });
  }
  if (tamper === 'unused_value') {
    const body = JSON.parse(Buffer.from(request.body as Uint8Array).toString('utf8'));
    body.ExpressionAttributeValues[':harvesterUnused'] = { N: '0' };
    request.body = JSON.stringify(body);
    request.headers['content-length'] = String(Buffer.byteLength(request.body as string));
  }
  return next(args);
};

beforeAll(async () => {
  aws = await setUpTestAws('refusals');
  aws.clients.dynamo.middlewareStack.add(tampering as never, {
    step: 'build',
    priority: 'high',
    name: 'testTampering',
  });
  items = new ItemStore(aws.clients.doc, aws.names.itemsTable);
});
afterAll(() => destroyAwsClients(aws.clients));

describe('an item write DynamoDB refuses', () => {
  it('for the item’s size makes that entity unstorable, with DynamoDB’s reason', async () => {
    tamper = 'size_refusal';

    const results = await items.loadAll('sized', entities(2), 'run-1', 1, 1);

    expect(results).toEqual([
      {
        entityId: 'e0',
        status: 'unstorable',
        reason: 'DynamoDB refused the record: Item size to update has exceeded the maximum allowed size',
      },
      expect.objectContaining({ entityId: 'e1', status: 'unstorable' }),
    ]);
  });

  it('for the request’s shape (an unused expression value) fails the page with the defect named', async () => {
    tamper = 'unused_value';

    const failure = await items.loadAll('shaped', entities(2), 'run-1', 1, 1).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(RequestRefusedError);
    expect((failure as Error).message).toBe(
      'DynamoDB refused the request itself: Value provided in ExpressionAttributeValues unused in expressions: keys: {:harvesterUnused}',
    );
    expect(await items.get('shaped', 'e0')).toBeUndefined();
  });

  it('is written as usual when nothing is wrong with it (the tampering is the only cause above)', async () => {
    tamper = 'none';

    const results = await items.loadAll('plain', entities(2), 'run-1', 1, 1);

    expect(results.map((r) => r.status)).toEqual(['written', 'written']);
  });
});
