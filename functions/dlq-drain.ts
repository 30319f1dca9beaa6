import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { drainDeadMessage } from '../lib/engine/index.js';
import { annotateWork, observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';
import { sharedPageKeys } from './shared/work-keys.js';

const { engine: deps, observability } = lambdaRuntime();
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
export const handler = observed(observability, async (event: SQSEvent, context) => {
  annotateWork(observability.tracer, sharedPageKeys(event.Records));
  return processPartialResponse(event, drainRecord, processor, { context });
});
