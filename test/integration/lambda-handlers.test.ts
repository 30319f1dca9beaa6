import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LambdaObservability } from '../../functions/shared/observed.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { setUpTestAws, TEST_REGION, type TestAws } from '../support/aws.js';

/**
 * Each Lambda handler, as the functions export it, runs under the shared Powertools stack: the
 * invocation's context reaches the logger, the tracer is consulted, and the metrics are flushed
 * when the invocation ends (also when it throws). Handlers are invoked for real against the
 * emulator, with the environment the stack gives them.
 */

type Invoke = (event: unknown, context: Context) => Promise<unknown>;

let aws: TestAws;
let observability: LambdaObservability;
const handlers: Record<string, Invoke> = {};
const saved = { ...process.env };

const sqsEvent = (body: string): SQSEvent => ({
  Records: [
    {
      messageId: 'm-1',
      receiptHandle: 'not-a-real-handle',
      body,
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
      awsRegion: TEST_REGION,
    } as SQSEvent['Records'][number],
  ],
});

const contextOf = (name: string): Context =>
  ({
    functionName: `harvester-${name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:harvester-${name}`,
    memoryLimitInMB: '256',
    awsRequestId: `request-${name}`,
    logGroupName: `/aws/lambda/harvester-${name}`,
    logStreamName: 's',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
  }) as Context;

beforeAll(async () => {
  aws = await setUpTestAws('handlers');
  Object.assign(process.env, {
    AWS_REGION: TEST_REGION,
    AWS_ENDPOINT_URL: aws.endpoint,
    HARVESTER_PREFIX: aws.prefix,
    PAGE_QUEUE_URL: aws.resources.pageQueueUrl,
    PAGE_QUEUE_ARN: aws.resources.pageQueueArn,
    HARVESTER_CURSOR_KEY: 'k'.repeat(32),
    LOG_LEVEL: 'INFO',
  });
  for (const name of ['api', 'source-check', 'page-worker', 'dlq-drain', 'reaper', 'start-run']) {
    handlers[name] = ((await import(`../../functions/${name}.ts`)) as { handler: Invoke }).handler;
  }
  observability = (await import('../../functions/shared/runtime.js')).lambdaRuntime().observability;
});
afterAll(() => {
  process.env = saved;
  destroyAwsClients(aws.clients);
});

const invocations: [string, unknown][] = [
  ['api', apiGatewayEvent({ method: 'GET', url: '/sources' })],
  ['source-check', { sourceId: 'no-such-source' }],
  ['start-run', { sourceId: 'no-such-source', mode: 'full' }],
  ['reaper', {}],
  ['dlq-drain', sqsEvent('{"not":"a page message"}')],
  ['page-worker', sqsEvent('not json')],
];

describe('every Lambda handler runs under the shared Powertools middlewares', () => {
  it.each(invocations)(
    '%s: logger gets the context, tracer is asked, metrics are flushed',
    async (name, event) => {
      const addContext = vi.spyOn(observability.logger, 'addContext');
      const tracing = vi.spyOn(observability.tracer, 'isTracingEnabled');
      const publish = vi.spyOn(observability.metrics, 'publishStoredMetrics');
      const lines: string[] = [];
      const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        lines.push(String(chunk));
        return true;
      });
      try {
        // A page that cannot be read fails the whole batch; the middlewares run all the same.
        await handlers[name]!(event, contextOf(name)).catch((error: unknown) => {
          if (name !== 'page-worker') throw error;
        });
      } finally {
        write.mockRestore();
      }
      expect(addContext).toHaveBeenCalledWith(expect.objectContaining({ awsRequestId: `request-${name}` }));
      expect(tracing).toHaveBeenCalled();
      expect(publish).toHaveBeenCalledTimes(1);
      const logged = lines.flatMap((line) => line.split('\n')).filter((line) => line.startsWith('{'));
      for (const line of logged.filter((l) => !l.includes('"_aws"'))) {
        expect(JSON.parse(line)).toMatchObject({ function_request_id: `request-${name}` });
      }
      vi.restoreAllMocks();
    },
  );
});
