import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type PageMessage, parsePageMessage } from '../../lib/queue/page-message.js';

/** The queue a test delivers page messages from by hand (no workers). */
export interface PageQueue {
  readonly clients: { readonly sqs: SQSClient };
  readonly resources: { readonly pageQueueUrl: string };
}

/** Receives and deletes every page message now visible in the page queue (up to 10). */
export async function takePageMessages(aws: PageQueue): Promise<PageMessage[]> {
  const { sqs } = aws.clients;
  const queueUrl = aws.resources.pageQueueUrl;
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
  );
  for (const m of Messages) {
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
  }
  return Messages.map((m) => parsePageMessage(m.Body!));
}
