import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../lib/aws/clients.js';
import { redeliverLater } from '../../lib/queue/page-queue.js';
import { TEST_REGION, testEndpoint } from '../support/aws.js';

/*
 * The failure path of a received message (the Lambda page worker and the local poller both end a
 * failed message there): it comes back after the delay chosen for its receive count, not after
 * the queue's visibility timeout.
 */

const sqs = createAwsClients({ region: TEST_REGION, endpoint: testEndpoint() }).sqs;
let queueUrl: string;

beforeAll(async () => {
  const name = `t-redeliver-${randomBytes(3).toString('hex')}`;
  // A visibility timeout far longer than the test: only the visibility change brings it back.
  const created = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '600' } }),
  );
  queueUrl = created.QueueUrl as string;
});

async function receive(waitSeconds: number) {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    }),
  );
  return Messages;
}

describe('redeliverLater', () => {
  it('makes a failed message visible again after the delay its receive count is given', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'page' }));
    const [first] = await receive(2);
    expect(first?.Attributes?.ApproximateReceiveCount).toBe('1');
    const counts: number[] = [];

    await redeliverLater(sqs, queueUrl, first?.ReceiptHandle, 1, (count) => {
      counts.push(count);
      return 0;
    });

    const [again] = await receive(2);
    expect(counts).toEqual([1]);
    expect(again?.Body).toBe('page');
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
  });

  it('does not throw when the queue refuses the change: the message comes back later, not lost', async () => {
    await expect(redeliverLater(sqs, queueUrl, 'not-a-receipt-handle', 1)).resolves.toBeUndefined();
  });
});
