import type { SQSRecord } from 'aws-lambda';
import { parsePageMessage } from '../queue/page-message.js';
import type { EngineDeps } from './deps.js';
import { processPage } from './page-step.js';
import type { StepResult } from './step.js';

/**
 * Handles one SQS record of the page queue: parse, then the page step. A malformed body or an
 * unexpected error throws, so the record is reported failed (partial batch response) and SQS
 * redelivers it; after `maxReceiveCount` deliveries it moves to the page DLQ, where the drain
 * turns it into a dead letter. Both the Lambda handler and the local runtime call this.
 */
export async function handlePageRecord(
  deps: EngineDeps,
  record: Pick<SQSRecord, 'body' | 'messageId'>,
): Promise<StepResult> {
  const message = parsePageMessage(record.body);
  return processPage(deps, message);
}

/**
 * How long a failed page message stays invisible before its next delivery: exponential in the
 * receive count, from 10 s up to 15 minutes. Without this a failure would wait the queue's full
 * visibility timeout (six worker timeouts), and a poison message would take hours to reach the DLQ.
 */
export function redeliveryDelaySeconds(receiveCount: number): number {
  return Math.min(900, 10 * 2 ** Math.max(0, receiveCount - 1));
}
