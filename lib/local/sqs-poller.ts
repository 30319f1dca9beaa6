import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { failedRecordLog, SimulatedCrashError } from '../engine/index.js';
import type { HarvesterLogger } from '../observability/logger.js';
import { redeliverLater } from '../queue/page-queue.js';

/** Handles one message; throwing reports it failed (it is redelivered later). */
export type MessageHandler = (message: {
  body: string;
  messageId: string;
  receiveCount: number;
}) => Promise<unknown>;

/** Options of {@link pollQueue}. */
export interface PollOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly handler: MessageHandler;
  readonly logger: HarvesterLogger;
  readonly signal: AbortSignal;
  /** Messages per receive, like the event source mapping's batch size. */
  readonly batchSize?: number;
  /** Long-poll wait; short so that stop() is prompt. */
  readonly waitSeconds?: number;
  /** Invisibility after a failure, by receive count (default: the Lambda handler's own policy). */
  readonly redeliveryDelay?: (receiveCount: number) => number;
}

/**
 * Polls a queue the way the Lambda event source mapping does: receive a batch, run the handler
 * on each message concurrently, delete the successes (partial batch response), and leave the
 * failures for redelivery after a short, growing delay — so SQS counts receives and redrives a
 * message that keeps failing to the DLQ, exactly as in AWS. A {@link SimulatedCrashError}
 * leaves its message in flight untouched, as a dead worker would.
 */
export async function pollQueue(options: PollOptions): Promise<void> {
  const { sqs, queueUrl, signal, logger } = options;
  while (!signal.aborted) {
    let messages: Message[] = [];
    try {
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: options.batchSize ?? 1,
          WaitTimeSeconds: options.waitSeconds ?? 1,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
        { abortSignal: signal },
      );
      messages = received.Messages ?? [];
    } catch (error) {
      if (signal.aborted) return;
      logger.warn('receive failed; retrying', { queueUrl, error: String(error) });
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    await Promise.all(messages.map((message) => settle(options, message)));
  }
}

async function settle(options: PollOptions, message: Message): Promise<void> {
  const { sqs, queueUrl, logger } = options;
  const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? '1');
  try {
    await options.handler({ body: message.Body ?? '', messageId: message.MessageId ?? '', receiveCount });
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
  } catch (error) {
    if (error instanceof SimulatedCrashError) {
      logger.warn('simulated worker crash; message left in flight', { messageId: message.MessageId });
      return;
    }
    logger.warn(
      'message failed; will be redelivered',
      failedRecordLog({ body: message.Body ?? '', messageId: message.MessageId ?? '' }, error, receiveCount),
    );
    await redeliverLater(sqs, queueUrl, message.ReceiptHandle, receiveCount, options.redeliveryDelay);
  }
}
