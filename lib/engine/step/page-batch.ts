import type { SQSRecord } from 'aws-lambda';
import {
  MalformedMessageError,
  type PageMessage,
  PageMessageSchema,
  parsePageMessage,
} from '../../queue/page-message.js';
import { settleMalformed, UNDELIVERABLE } from '../chain/undeliverable.js';
import type { EngineDeps } from '../deps.js';
import type { StepResult } from './context.js';
import { processPage } from './page-step.js';

/**
 * Handles one SQS record of the page queue: parse, then the page step. A malformed body that
 * names the page its run expects ends that run failed (see chain/undeliverable.ts); any other
 * malformed body or an unexpected error throws, so the record is reported failed (partial batch response) and SQS
 * redelivers it; after `maxReceiveCount` deliveries it moves to the page DLQ, where the drain
 * turns it into a dead letter. Both the Lambda handler and the local runtime call this.
 */
export async function handlePageRecord(
  deps: EngineDeps,
  record: Pick<SQSRecord, 'body' | 'messageId'>,
): Promise<StepResult> {
  let message: PageMessage;
  try {
    message = parsePageMessage(record.body);
  } catch (error) {
    if (!(error instanceof MalformedMessageError)) throw error;
    // Unreadable now, unreadable on every delivery: when it is the page its run waits for, the
    // run ends failed at once instead of after the redrive (and the reaper's re-sends).
    const settled = await settleMalformed(deps, record.body, error.message, 1, { onlyIfExpected: true });
    if (settled?.endedRun) return { outcome: 'failed', reason: UNDELIVERABLE };
    throw error;
  }
  return processPage(deps, message);
}

/** `error` and its causes as one line: `RunStateError: … ← ConditionalCheckFailedException: …`. */
export function causeChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    parts.push(current instanceof Error ? `${current.name}: ${current.message}` : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(' ← ');
}

/**
 * The attributes of a failed page record's log line: which run, source, epoch and page (when the
 * body is a page message), the delivery count and the cause. Without this line a failure would
 * only show as a partial batch response, and the reason a page keeps coming back is lost.
 */
export function failedRecordLog(
  record: Pick<SQSRecord, 'body' | 'messageId'>,
  error: unknown,
  receiveCount: number,
): Record<string, unknown> {
  let keys: Record<string, unknown> = {};
  try {
    const parsed = PageMessageSchema.safeParse(JSON.parse(record.body));
    if (parsed.success) {
      const { runId, sourceId, epoch, page } = parsed.data;
      keys = { runId, sourceId, epoch, page };
    }
  } catch {
    // A malformed body: the cause says so; there is no run to name.
  }
  return {
    ...keys,
    messageId: record.messageId,
    receiveCount,
    errorName: error instanceof Error ? error.name : typeof error,
    cause: causeChain(error),
    ...(error instanceof Error ? { error } : {}),
  };
}
