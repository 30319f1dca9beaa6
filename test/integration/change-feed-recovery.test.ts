import {
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DETAIL_TYPES } from '../../lib/events/details.js';
import { TEST_REGION } from '../support/aws.js';
import { useEngineWithFakes } from '../support/harness.js';

/**
 * The local change feed survives what DynamoDB Streams does to a long-lived reader and moto never
 * does by itself: an iterator that expired (15 minutes unused) and data trimmed past the 24 h
 * retention. A middleware on the runtime's own Streams client answers one GetRecords with the
 * service's exception; everything else is the emulator's stream.
 */

const fault: { next: ExpiredIteratorException | TrimmedDataAccessException | undefined; thrown: number } = {
  next: undefined,
  thrown: 0,
};
const deadIterators = new Map<string, Error>();
/** The ShardIteratorType of every GetShardIterator the feed sent. */
const iteratorTypes: string[] = [];
let queueUrl: string;

const { engine } = useEngineWithFakes('feed-recovery', { workers: 0, bootstrap: { changeFeed: true } });

beforeAll(async () => {
  const { sqs, events } = engine.aws.clients;
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${engine.aws.prefix}-observer` })))
    .QueueUrl!;
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const rule = `${engine.aws.prefix}-entities`;
  const bus = engine.aws.names.eventBus;
  await events.send(
    new PutRuleCommand({
      Name: rule,
      EventBusName: bus,
      EventPattern: JSON.stringify({ source: ['harvester'] }),
    }),
  );
  await events.send(
    new PutTargetsCommand({
      Rule: rule,
      EventBusName: bus,
      Targets: [{ Id: 'observer', Arn: Attributes!.QueueArn! }],
    }),
  );
  const streams = new DynamoDBStreamsClient({
    region: TEST_REGION,
    endpoint: engine.aws.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  streams.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ShardIteratorType?: string; ShardIterator?: string };
      if (context.commandName === 'GetShardIteratorCommand')
        iteratorTypes.push(String(input.ShardIteratorType));
      if (context.commandName === 'GetRecordsCommand') {
        // As on DynamoDB, an iterator that expired (or points at trimmed data) stays unusable.
        const dead = deadIterators.get(String(input.ShardIterator));
        if (dead) throw dead;
        if (fault.next) {
          const error = fault.next;
          fault.next = undefined;
          fault.thrown++;
          deadIterators.set(String(input.ShardIterator), error);
          throw error;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectStreamFault' },
  );
  engine
    .runtime({ workers: 0, reaperIntervalMs: 3_600_000, changeFeed: { includeData: false, streams } })
    .start();
  // The feed reads from LATEST: let it take its first iterator before anything is written.
  await until(() => iteratorTypes.length > 0);
});

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Stores an entity's change as the item store does (the fields the feed reads). */
async function change(entityId: string, changeSeq = 1): Promise<void> {
  const at = Date.now();
  await engine.aws.clients.doc.send(
    new PutCommand({
      TableName: engine.deps.items.tableName,
      Item: {
        sourceId: 'feed',
        entityId,
        version: String(changeSeq),
        data: {},
        runId: 'run',
        changedBy: 'run',
        changedAt: at,
        syncedAt: at,
        lastWrite: 'changed',
        changeSeq,
      },
    }),
  );
}

/** The entity ids of the Entity Changed events received until `expected` arrived, and 2 s more. */
async function changedIds(expected: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  const deadline = Date.now() + 30_000;
  let settleUntil = Number.POSITIVE_INFINITY;
  while (Date.now() < Math.min(deadline, settleUntil)) {
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        WaitTimeSeconds: 1,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 3_600,
      }),
    );
    for (const m of Messages) {
      const event = JSON.parse(m.Body!) as { 'detail-type': string; detail: { entityId: string } };
      if (event['detail-type'] === DETAIL_TYPES.entityChanged) ids.push(event.detail.entityId);
    }
    if (settleUntil === Number.POSITIVE_INFINITY && expected.every((id) => ids.includes(id)))
      settleUntil = Date.now() + 2_000;
  }
  return ids.sort();
}

describe('the local change feed after a lost iterator', () => {
  it('after an expired iterator, resumes after the last record it published: each change once', async () => {
    await change('e-1');
    expect(await changedIds(['e-1'])).toEqual(['e-1']);
    const before = iteratorTypes.length;

    fault.next = new ExpiredIteratorException({ message: 'Iterator already expired', $metadata: {} });
    await until(() => fault.thrown === 1);
    await change('e-2');
    await change('e-3');

    expect(await changedIds(['e-2', 'e-3'])).toEqual(['e-2', 'e-3']);
    expect(iteratorTypes.slice(before)).toEqual(['AFTER_SEQUENCE_NUMBER']);
  });

  it('after trimmed data, starts again at the oldest record left: later changes publish, earlier ones again', async () => {
    const before = iteratorTypes.length;

    fault.next = new TrimmedDataAccessException({ message: 'Data trimmed', $metadata: {} });
    await until(() => fault.thrown === 2);
    await change('e-4');

    // Nothing the emulator keeps is really trimmed, so the whole stream comes again: at least once.
    expect(await changedIds(['e-1', 'e-2', 'e-3', 'e-4'])).toEqual(['e-1', 'e-2', 'e-3', 'e-4']);
    expect(iteratorTypes.slice(before)).toEqual(['TRIM_HORIZON']);
  });
});
