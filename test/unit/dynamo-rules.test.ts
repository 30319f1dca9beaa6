import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DynamoDBClient, DynamoDBServiceException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { HttpResponse } from '@smithy/protocol-http';
import type { HttpRequest } from '@smithy/types';
import { describe, expect, it, vi } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.js';
import { type StrictMode, strictDynamoDB, strictModeFromEnv } from '../../lib/aws/dynamo-rules.js';

/**
 * The strict layer on a client whose transport answers locally: DescribeTable with the table's
 * key schema (`id`, plus `sk` for the `sorted` table), every other call with `{}` while recording
 * it. So a refusal is proven unsent, and an accepted request proven sent.
 */
function strictClient(mode: StrictMode = { kind: 'throw' }) {
  const sent: string[] = [];
  const requestHandler = {
    async handle(request: HttpRequest) {
      const target = String(request.headers['x-amz-target']).split('.')[1] ?? '';
      let body = '{}';
      if (target === 'DescribeTable') {
        const table = (JSON.parse(String(request.body)) as { TableName: string }).TableName;
        const keys = [{ AttributeName: 'id', KeyType: 'HASH' }];
        if (table === 'sorted') keys.push({ AttributeName: 'sk', KeyType: 'RANGE' });
        body = JSON.stringify({ Table: { TableName: table, KeySchema: keys } });
      } else sent.push(target);
      return {
        response: new HttpResponse({
          statusCode: 200,
          headers: { 'content-type': 'application/x-amz-json-1.0' },
          body: Readable.from([Buffer.from(body)]),
        }),
      };
    },
  };
  const config = {
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    requestHandler,
  };
  const dynamo = new DynamoDBClient(config);
  dynamo.middlewareStack.use(strictDynamoDB(config, mode));
  return { dynamo, doc: DynamoDBDocumentClient.from(dynamo), sent };
}

async function refusal(send: Promise<unknown>): Promise<{ name: string; message: string }> {
  const error = await send.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DynamoDBServiceException);
  const { name, message, $fault, $metadata } = error as DynamoDBServiceException;
  expect({ $fault, status: $metadata.httpStatusCode }).toEqual({ $fault: 'client', status: 400 });
  return { name, message };
}

/** `levels` maps, one inside the other, around a number. */
const nested = (levels: number): unknown =>
  Array.from({ length: levels }).reduce<unknown>((inner) => ({ a: inner }), 1);
const validation = (message: string) => ({ name: 'ValidationException', message });
const running = { TableName: 'runs', Key: { id: 'r1' } };
const puts = (count: number, table = 'runs') =>
  Array.from({ length: count }, (_, i) => ({ PutRequest: { Item: { id: `e${i}` } } })).map((r) => ({
    table,
    r,
  }));

describe('the strict DynamoDB layer', () => {
  it.each([
    [
      'an expression attribute value no expression uses',
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': 1, ':one': 1 },
      }),
      'Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}',
    ],
    [
      'an expression attribute name no expression uses',
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':n': 1 },
      }),
      'Value provided in ExpressionAttributeNames unused in expressions: keys: {#state}',
    ],
    [
      'a value the expression uses but does not define',
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET n = :n',
        ConditionExpression: 'n < :limit',
        ExpressionAttributeValues: { ':n': 1 },
      }),
      'Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :limit',
    ],
    [
      'a name placeholder the expression uses but does not define',
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET #n = :n',
        ExpressionAttributeValues: { ':n': 1 },
      }),
      'Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #n',
    ],
    [
      'a reserved word without a name placeholder',
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET status = :s',
        ExpressionAttributeValues: { ':s': 'x' },
      }),
      'Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: status',
    ],
    [
      'an expression over 4 KB',
      new UpdateCommand({
        ...running,
        UpdateExpression: `SET ${Array.from({ length: 300 }, (_, i) => `attribute${i} = :v`).join(', ')}`,
        ExpressionAttributeValues: { ':v': 1 },
      }),
      'Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; expression size: 5592',
    ],
    [
      'an item over 400 KB, counted in UTF-8 bytes',
      new PutCommand({ TableName: 'runs', Item: { id: 'r1', text: 'é'.repeat(210_000) } }),
      'Item size has exceeded the maximum allowed size',
    ],
    [
      'lists and maps nested deeper than 32 levels',
      new PutCommand({
        TableName: 'runs',
        Item: { id: 'r1', data: nested(33) },
      }),
      'Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit',
    ],
    [
      'a partition key over 2048 bytes',
      new PutCommand({ TableName: 'runs', Item: { id: 'x'.repeat(2049) } }),
      'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes',
    ],
    [
      'a sort key over 1024 bytes',
      new UpdateCommand({
        TableName: 'sorted',
        Key: { id: 'a', sk: 'ü'.repeat(513) },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': 1 },
      }),
      'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes',
    ],
    [
      'a value one transaction action sends but only another uses',
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: 'chains',
              Key: { id: 'c1' },
              UpdateExpression: 'SET n = n + :one',
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
          {
            ConditionCheck: {
              ...running,
              ConditionExpression: '#state = :running',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: { ':running': 'running', ':one': 1 },
            },
          },
        ],
      }),
      'Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}',
    ],
    [
      'two actions of one transaction on one item',
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: 'runs', Item: { id: 'r1', n: 1 } } },
          { ConditionCheck: { ...running, ConditionExpression: 'attribute_exists(id)' } },
        ],
      }),
      'Transaction request cannot include multiple operations on one item',
    ],
    [
      'a transaction of more than 100 actions',
      new TransactWriteCommand({
        TransactItems: Array.from({ length: 101 }, (_, i) => ({
          Put: { TableName: 'runs', Item: { id: `r${i}` } },
        })),
      }),
      "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100",
    ],
    [
      'a transaction of more than 4 MB',
      new TransactWriteCommand({
        TransactItems: Array.from({ length: 11 }, (_, i) => ({
          Put: { TableName: 'runs', Item: { id: `r${i}`, text: 'x'.repeat(400_000) } },
        })),
      }),
      'Transaction payload size cannot exceed 4MB. Payload Size: 4400089',
    ],
    [
      'a read transaction of more than 100 gets',
      new TransactGetCommand({
        TransactItems: Array.from({ length: 101 }, (_, i) => ({
          Get: { TableName: 'runs', Key: { id: `r${i}` } },
        })),
      }),
      "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100",
    ],
    [
      'a batch read of more than 100 keys',
      new BatchGetCommand({
        RequestItems: {
          runs: { Keys: Array.from({ length: 60 }, (_, i) => ({ id: `r${i}` })) },
          chains: { Keys: Array.from({ length: 41 }, (_, i) => ({ id: `c${i}` })) },
        },
      }),
      'Too many items requested for the BatchGetItem call',
    ],
    [
      'a batch write of more than 25 requests over two tables',
      new BatchWriteCommand({
        RequestItems: {
          runs: puts(13).map(({ r }) => r),
          chains: puts(13, 'chains').map(({ r }) => r),
        },
      }),
      'Too many items requested for the BatchWriteItem call',
    ],
  ])('refuses %s, unsent, with DynamoDB’s error', async (_rule, command, message) => {
    const { doc, sent } = strictClient();

    expect(await refusal(doc.send(command as never))).toEqual(validation(message));
    expect(sent).toEqual([]);
  });

  it('refuses a batch write of more than 25 requests to one table with DynamoDB’s constraint message', async () => {
    const { doc } = strictClient();

    const { name, message } = await refusal(
      doc.send(new BatchWriteCommand({ RequestItems: { runs: puts(26).map(({ r }) => r) } })),
    );

    expect(name).toBe('ValidationException');
    expect(message).toMatch(
      /^1 validation error detected: Value '.*' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: \[Member must have length less than or equal to 25, Member must have length greater than or equal to 1\]$/,
    );
  });

  it.each([
    [
      'a value',
      {
        ...running,
        UpdateExpression: 'SET ids = :ids',
        ExpressionAttributeValues: { ':ids': ['e-1\ud800'] },
      },
      ':ids.L[0].S',
    ],
    [
      'a map key',
      {
        ...running,
        UpdateExpression: 'SET m = :m',
        ExpressionAttributeValues: { ':m': { a: { 'k\udc00': 1 } } },
      },
      ':m.M.a.M.k\ufffd',
    ],
    [
      'a key',
      {
        TableName: 'runs',
        Key: { id: '\udbff' },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': 1 },
      },
      'Key.id.S',
    ],
  ])(
    'refuses a lone UTF-16 surrogate in %s, unsent: DynamoDB keeps UTF-8, which has no form for it',
    async (_where, input, path) => {
      const { doc, sent } = strictClient();

      const refused = await refusal(doc.send(new UpdateCommand(input as never)));

      expect(refused.name).toBe('ValidationException');
      expect(refused.message).toContain(`${path} holds a lone UTF-16 surrogate`);
      expect(sent).toEqual([]);
    },
  );

  it('sends a surrogate pair (an emoji) as the one character it is', async () => {
    const { doc, sent } = strictClient();

    await doc.send(
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET t = :t',
        ExpressionAttributeValues: { ':t': 'ok \ud83d\ude00' },
      }),
    );

    expect(sent).toEqual(['UpdateItem']);
  });

  it('checks the low-level client too, where values travel as attribute values', async () => {
    const { dynamo, sent } = strictClient();

    const refused = await refusal(
      dynamo.send(
        new UpdateItemCommand({
          TableName: 'runs',
          Key: { id: { S: 'r1' } },
          UpdateExpression: 'SET n = :n',
          ExpressionAttributeValues: { ':n': { N: '1' }, ':one': { N: '1' } },
        }),
      ),
    );

    expect(refused).toEqual(
      validation('Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}'),
    );
    expect(sent).toEqual([]);
  });

  it('sends what DynamoDB accepts: every value used, placeholders for reserved words, limits kept', async () => {
    const { doc, sent } = strictClient();

    await doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: 'sorted',
              Key: { id: 'a', sk: 'ü'.repeat(512) },
              UpdateExpression: 'SET #status = :s',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':s': 'done' },
            },
          },
          { Put: { TableName: 'runs', Item: { id: 'x'.repeat(2048), text: 'é'.repeat(190_000) } } },
          { ConditionCheck: { ...running, ConditionExpression: 'attribute_exists(id)' } },
        ],
      }),
    );
    await doc.send(new BatchWriteCommand({ RequestItems: { runs: puts(25).map(({ r }) => r) } }));
    await doc.send(new PutCommand({ TableName: 'runs', Item: { id: 'deep', data: nested(32) } }));

    expect(sent).toEqual(['TransactWriteItems', 'BatchWriteItem', 'PutItem']);
  });

  it('in report mode appends each violation as a JSON line and still sends the request', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'strict-')), 'violations.jsonl');
    const { doc, sent } = strictClient({ kind: 'report', file });

    await doc.send(
      new UpdateCommand({
        ...running,
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': 1, ':one': 1 },
      }),
    );

    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({
        operation: 'UpdateItem',
        tables: ['runs'],
        name: 'ValidationException',
        message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}',
      }),
    ]);
    expect(sent).toEqual(['UpdateItem']);
  });

  it.each([
    [{}, undefined],
    [{ HARVESTER_STRICT_DYNAMODB: 'off' }, { kind: 'off' }],
    [{ HARVESTER_STRICT_DYNAMODB: 'on' }, { kind: 'throw' }],
    [{ HARVESTER_STRICT_DYNAMODB: 'report:/tmp/v.jsonl' }, { kind: 'report', file: '/tmp/v.jsonl' }],
  ])('reads the mode from %o', (env, mode) => {
    expect(strictModeFromEnv(env)).toEqual(mode);
  });

  it('refuses a mode it does not know', () => {
    expect(() => strictModeFromEnv({ HARVESTER_STRICT_DYNAMODB: 'loud' })).toThrow(
      /off, on, or report:<file>/,
    );
  });

  it.each([
    ['with an emulator endpoint', { endpoint: 'http://127.0.0.1:1' }, true],
    ['on real AWS', {}, false],
    ['when told off', { endpoint: 'http://127.0.0.1:1', strictDynamoDB: { kind: 'off' } as const }, false],
  ])('createAwsClients puts the layer on the DynamoDB client %s: %s', (_where, options, on) => {
    // The defaults, whatever mode the shell running the tests asks for.
    vi.stubEnv('HARVESTER_STRICT_DYNAMODB', '');
    const clients = createAwsClients({ region: 'us-east-1', ...options });
    vi.unstubAllEnvs();

    const names = clients.dynamo.middlewareStack.identify();

    expect(names.some((name) => name.startsWith('harvesterStrictDynamoDB'))).toBe(on);
    destroyAwsClients(clients);
  });
});
