import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import {
  failedRecordLog,
  handlePageRecord,
  lambdaEngine,
  redeliveryDelaySeconds,
} from '../lib/engine/index.js';

const deps = lambdaEngine();
const sqs = new SQSClient({});
const processor = new BatchProcessor(EventType.SQS);

/** A failed record comes back after a short growing delay instead of the queue's long visibility timeout. */
async function processRecord(record: SQSRecord): Promise<void> {
  try {
    await handlePageRecord(deps, record);
  } catch (error) {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? '1');
    deps.logger.error(
      'page message failed; SQS will deliver it again',
      failedRecordLog(record, error, receiveCount),
    );
    await sqs
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: process.env.PAGE_QUEUE_URL,
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: redeliveryDelaySeconds(receiveCount),
        }),
      )
      .catch(() => undefined);
    throw error;
  }
}

/** Page worker: one SQS batch of page messages, answered with a partial batch response. */
export const handler = middy(async (event: SQSEvent, context: Context) => {
  try {
    return await processPartialResponse(event, processRecord, processor, { context });
  } finally {
    deps.metrics.flush();
  }
});
