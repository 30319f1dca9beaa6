import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { drainDeadMessage, lambdaEngine } from '../lib/engine/index.js';

const deps = lambdaEngine();
const processor = new BatchProcessor(EventType.SQS);

async function drainRecord(record: SQSRecord): Promise<void> {
  const result = await drainDeadMessage(
    deps,
    record.body,
    Number(record.attributes.ApproximateReceiveCount ?? '1'),
  );
  deps.logger.info('drained page DLQ message', { messageId: record.messageId, ...result });
}

/** DLQ drain: messages the page queue gave up on become dead_letters entries; their runs are settled. */
export const handler = middy(async (event: SQSEvent, context: Context) => {
  try {
    return await processPartialResponse(event, drainRecord, processor, { context });
  } finally {
    deps.metrics.flush();
  }
});
