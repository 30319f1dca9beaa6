import { randomBytes } from 'node:crypto';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../lib/local/emulator.js';
import { type LocalStack, startLocalStack } from '../../lib/local/local-stack.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';
import { TEST_REGION, testEndpoint } from '../support/aws.js';

/**
 * DynamoDB on one emulator, every other service on another (`AWS_ENDPOINT_URL` and
 * `AWS_ENDPOINT_URL_DYNAMODB`, as a user of DynamoDB Local or LocalStack sets them): the tables
 * land on the DynamoDB emulator only, the queues on the other only, and a run succeeds across both.
 */

const ENTITIES = 120;
const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const prefix = `t-split-${randomBytes(3).toString('hex')}`;
let dynamoEmulator: Emulator;
let stack: LocalStack;
let fake: FakeSource;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T;
  if (response.status >= 400)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function tablesOn(endpoint: string): Promise<string[]> {
  const client = new DynamoDBClient({ region: TEST_REGION, endpoint, credentials });
  try {
    const { TableNames = [] } = await client.send(new ListTablesCommand({}));
    return TableNames.filter((name) => name.startsWith(prefix));
  } finally {
    client.destroy();
  }
}

async function queuesOn(endpoint: string): Promise<string[]> {
  const client = new SQSClient({ region: TEST_REGION, endpoint, credentials });
  try {
    const { QueueUrls = [] } = await client.send(new ListQueuesCommand({ QueueNamePrefix: prefix }));
    return QueueUrls;
  } finally {
    client.destroy();
  }
}

beforeAll(async () => {
  // A second emulator of its own (an empty env: nothing given, so moto is started for it).
  dynamoEmulator = await startEmulator({});
  [stack, fake] = await Promise.all([
    startLocalStack({
      prefix,
      workers: 1,
      logLevel: 'SILENT',
      env: {
        AWS_REGION: TEST_REGION,
        AWS_ENDPOINT_URL: testEndpoint(),
        AWS_ENDPOINT_URL_DYNAMODB: dynamoEmulator.endpoint,
      },
    }),
    startFakeSource({ entities: ENTITIES, seed: 31, latencyMs: 0 }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), fake?.stop()]);
  await dynamoEmulator?.stop();
});

describe('DynamoDB on its own emulator', () => {
  it('creates the tables on the DynamoDB emulator and none on the other', async () => {
    expect(stack.endpoints.dynamodb).toBe(dynamoEmulator.endpoint);
    expect(stack.endpoints.sqs).toBe(testEndpoint());
    expect((await tablesOn(dynamoEmulator.endpoint)).sort()).toEqual(
      [
        stack.config.names.syncRunsTable,
        stack.config.names.sourcesTable,
        stack.config.names.deadLettersTable,
        stack.config.names.itemsTable,
        stack.config.names.rateBudgetsTable,
      ].sort(),
    );
    expect(await tablesOn(testEndpoint())).toEqual([]);
  });

  it('creates the queues on the other emulator and none on the DynamoDB one', async () => {
    expect(await queuesOn(testEndpoint())).toHaveLength(2);
    expect(await queuesOn(dynamoEmulator.endpoint)).toEqual([]);
  });

  it('runs a source to success across both emulators, a loopback source allowed as local', async () => {
    await api('PUT', '/sources/split', { connector: 'rest-json', config: fakeRestConfig(fake.url) });
    const { runId } = await api<{ runId: string }>('POST', '/sources/split/runs', { mode: 'full' });
    let run = await api<{ state: string; progress: { processed: number } }>('GET', `/runs/${runId}`);
    const deadline = Date.now() + 60_000;
    while (!['succeeded', 'failed', 'cancelled'].includes(run.state) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      run = await api('GET', `/runs/${runId}`);
    }
    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(ENTITIES);
    // The run's rows went to the DynamoDB emulator; the other holds no table to put them in.
    expect(await tablesOn(testEndpoint())).toEqual([]);
  }, 90_000);
});
