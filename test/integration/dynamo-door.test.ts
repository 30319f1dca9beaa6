import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoDoor, openDynamoDoor } from '../../lib/local/dynamo-door.js';
import { TEST_REGION, testEndpoint } from '../support/aws.js';

/**
 * The emulator's door judges the bytes that reach the emulator, whoever built them: here a bare
 * SDK client without the strict layer sends what moto accepts and DynamoDB refuses.
 */

const table = `t-door-${randomBytes(3).toString('hex')}`;
const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
let door: DynamoDoor;
let client: DynamoDBClient;
let direct: DynamoDBClient;

beforeAll(async () => {
  const endpoint = testEndpoint();
  door = await openDynamoDoor(endpoint);
  // Bare clients: no strict layer, no conflict retry — nothing of the project's own stands between.
  client = new DynamoDBClient({ region: TEST_REGION, endpoint: door.endpoint, credentials });
  direct = new DynamoDBClient({ region: TEST_REGION, endpoint, credentials });
  await client.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
});

afterAll(async () => {
  await direct.send(new DeleteTableCommand({ TableName: table }));
  client.destroy();
  direct.destroy();
  await door.close();
});

describe('the DynamoDB door in front of the emulator', () => {
  it('refuses an unused expression value as DynamoDB does, and the emulator never sees the write', async () => {
    const send = client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: 'a' } },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: '1' }, ':one': { N: '1' } },
      }),
    );
    await expect(send).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}',
      $metadata: { httpStatusCode: 400 },
    });
    const { Item } = await direct.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: 'a' } }, ConsistentRead: true }),
    );
    expect(Item).toBeUndefined();
    expect(door.violations()).toEqual([
      expect.objectContaining({ operation: 'UpdateItem', tables: [table], name: 'ValidationException' }),
    ]);
  });

  it('refuses two actions on one item in a transaction (moto applies both)', async () => {
    const before = door.violations().length;
    const update = (n: string) => ({
      Update: {
        TableName: table,
        Key: { pk: { S: 'b' } },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: n } },
      },
    });
    await expect(
      client.send(new TransactWriteItemsCommand({ TransactItems: [update('1'), update('2')] })),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    expect(door.violations().length).toBe(before + 1);
  });

  it('passes a request that keeps the rules through unchanged', async () => {
    const before = door.violations().length;
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: 'c' } },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: '7' } },
      }),
    );
    const { Item } = await client.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: 'c' } }, ConsistentRead: true }),
    );
    expect(Item?.n).toEqual({ N: '7' });
    expect(door.violations().length).toBe(before);
  });
});
