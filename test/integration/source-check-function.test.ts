import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiDeps, createApiDeps } from '../../lib/api/deps.js';
import { type Invoke, invokedSourceCheck } from '../../lib/api/source-check.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { loadConfig } from '../../lib/config/env.js';
import { createEngineDeps } from '../../lib/engine/index.js';
import { MAX_CONCURRENT_SOURCE_TESTS } from '../../lib/store/source-test-leases.js';
import { type FakeSource, startFakeSource } from '../../tools/fake-source/index.js';
import { callApi } from '../support/api.js';
import { setUpTestAws, TEST_REGION, type TestAws } from '../support/aws.js';
import { fakeRestConfig } from '../support/harness.js';
import { type SlowHost, startSlowHost } from '../support/listener.js';

/**
 * `POST /sources/{id}/test` as it runs on AWS: the API invokes the check function
 * (functions/source-check.ts, its real handler against the emulator, with the environment the
 * stack gives it) and answers what it answered. The invoke stands in for Lambda's runtime: the
 * event is the JSON the API sent, the payload is `JSON.stringify` of what the handler returned,
 * and a handler that throws is answered `FunctionError: Unhandled` with its error type.
 */

const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:harvester-source-check';
type Handler = (event: unknown, context: Context) => Promise<unknown>;

let aws: TestAws;
let fake: FakeSource;
let slow: SlowHost;
let handler: Handler;
let inProcess: ApiDeps;
let viaFunction: ApiDeps;
const events: unknown[] = [];
const saved = { ...process.env };

const context = {
  functionName: 'harvester-source-check',
  functionVersion: '$LATEST',
  invokedFunctionArn: FUNCTION_ARN,
  memoryLimitInMB: '256',
  awsRequestId: 'request-source-check',
  logGroupName: '/aws/lambda/harvester-source-check',
  logStreamName: 's',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 15_000,
} as Context;

/** Lambda's runtime around the handler, as far as a RequestResponse invocation shows it. */
const lambdaRuntime: Invoke = async (request) => {
  expect(request.FunctionName).toBe(FUNCTION_ARN);
  const event: unknown = JSON.parse(new TextDecoder().decode(request.Payload));
  events.push(event);
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  try {
    return { Payload: encode(await handler(event, context)) };
  } catch (error) {
    const { name, message } = error as Error;
    return { FunctionError: 'Unhandled', Payload: encode({ errorType: name, errorMessage: message }) };
  }
};

beforeAll(async () => {
  aws = await setUpTestAws('source-check-fn');
  const env = {
    AWS_REGION: TEST_REGION,
    AWS_ENDPOINT_URL: aws.endpoint,
    HARVESTER_PREFIX: aws.prefix,
    PAGE_QUEUE_URL: aws.resources.pageQueueUrl,
    PAGE_QUEUE_ARN: aws.resources.pageQueueArn,
    LOG_LEVEL: 'SILENT',
  };
  Object.assign(process.env, env);
  handler = ((await import('../../functions/source-check.js')) as { handler: Handler }).handler;
  const config = loadConfig(env);
  const engine = createEngineDeps({ config, clients: aws.clients, queues: aws.resources });
  inProcess = createApiDeps(engine, { config, scheduler: aws.clients.scheduler });
  // As the stack sets it up, but with Lambda's runtime in place of the Lambda client.
  viaFunction = {
    ...createApiDeps(engine, {
      config: loadConfig({ ...env, SOURCE_CHECK_FUNCTION_ARN: FUNCTION_ARN }),
      scheduler: aws.clients.scheduler,
    }),
    sourceCheck: invokedSourceCheck(lambdaRuntime, FUNCTION_ARN),
  };
  fake = await startFakeSource({ entities: 30, seed: 7, profile: { invalidRecords: 0 } });
  slow = await startSlowHost(60_000);
});
afterAll(async () => {
  process.env = saved;
  await fake.stop();
  await slow.stop();
  destroyAwsClients(aws.clients);
});

describe('a connection check run by the check function', () => {
  it('answers what the check answers in process, having been sent the source id alone', async () => {
    await callApi(inProcess, 'PUT', '/sources/fn-ok', {
      connector: 'rest-json',
      config: fakeRestConfig(fake.url),
    });
    events.length = 0;

    const remote = await callApi(viaFunction, 'POST', '/sources/fn-ok/test');
    const local = await callApi(inProcess, 'POST', '/sources/fn-ok/test');

    expect(events).toEqual([{ sourceId: 'fn-ok' }]);
    expect(remote.status).toBe(200);
    expect(remote.json).toMatchObject({ ok: true, sourceId: 'fn-ok', page: { items: 30 }, problem: null });
    const timeless = (body: { request: object; rateLimit: unknown }) => ({
      ...body,
      request: { ...body.request, durationMs: 0 },
      rateLimit: null,
    });
    expect(timeless(remote.json)).toEqual(timeless(local.json));
  });

  it('answers 404 naming the source when there is no such source', async () => {
    const res = await callApi(viaFunction, 'POST', '/sources/fn-missing/test');

    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ sourceId: 'fn-missing' });
  });

  it('refuses any event but { sourceId }: a config handed to it fails the invocation (502)', async () => {
    await expect(
      handler({ sourceId: 'fn-ok', config: { baseUrl: 'https://elsewhere.example' } }, context),
    ).rejects.toThrow();
    await expect(handler({ sourceId: 'binding#fn-ok' }, context)).rejects.toThrow();

    // An API that sent more than the id would be answered 502, not a check of that config.
    const sendingMore = invokedSourceCheck(
      (request) =>
        lambdaRuntime({
          ...request,
          Payload: new TextEncoder().encode(JSON.stringify({ sourceId: 'fn-ok', config: {} })),
        }),
      FUNCTION_ARN,
    );
    const res = await callApi({ ...viaFunction, sourceCheck: sendingMore }, 'POST', '/sources/fn-ok/test');
    expect(res.status).toBe(502);
  });

  it(`keeps to ${MAX_CONCURRENT_SOURCE_TESTS} checks of one source at once, answering the rest 429 with Retry-After`, async () => {
    await callApi(inProcess, 'PUT', '/sources/fn-flood', {
      connector: 'rest-json',
      config: fakeRestConfig(slow.url),
    });

    const answers = await Promise.all(
      Array.from({ length: MAX_CONCURRENT_SOURCE_TESTS + 2 }, () =>
        callApi(viaFunction, 'POST', '/sources/fn-flood/test'),
      ),
    );

    expect(answers.filter((a) => a.status === 200)).toHaveLength(MAX_CONCURRENT_SOURCE_TESTS);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(2);
    expect(refused[0]?.headers['retry-after']).toBe('5');
    expect(refused[0]?.json.detail).toMatch(/connection checks of source fn-flood are running/);
  }, 20_000);
});
