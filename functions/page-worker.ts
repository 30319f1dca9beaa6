import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { failedRecordLog, handlePageRecord } from '../lib/engine/index.js';
import { annotateWork, observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';
import { sharedPageKeys } from './shared/work-keys.js';

const { engine: deps, observability } = lambdaRuntime();
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
    await deps.queue.redeliverLater(record.receiptHandle, receiveCount);
    throw error;
  }
}

/** Page worker: one SQS batch of page messages, answered with a partial batch response. */
export const handler = observed(observability, async (event: SQSEvent, context) => {
  annotateWork(observability.tracer, sharedPageKeys(event.Records));
  return processPartialResponse(event, processRecord, processor, { context });
});
