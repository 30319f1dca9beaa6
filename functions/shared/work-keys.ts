import type { SQSRecord } from 'aws-lambda';
import { PageMessageSchema } from '../../lib/queue/page-message.js';

/** The run and source a batch of page messages is about, for the trace's annotations. */
export interface TraceKeys {
  readonly runId?: string;
  readonly sourceId?: string;
}

/**
 * The run and source every record of `records` names. A trace annotation holds one value, so a
 * key on which the records disagree (a drain batch may hold several runs' pages) is left out;
 * a malformed body names nothing.
 */
export function sharedPageKeys(records: readonly Pick<SQSRecord, 'body'>[]): TraceKeys {
  const keys = records.map(({ body }) => {
    try {
      const parsed = PageMessageSchema.safeParse(JSON.parse(body));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  });
  const shared = (pick: (k: { runId: string; sourceId: string }) => string): string | undefined => {
    const values = new Set(keys.map((k) => (k ? pick(k) : undefined)));
    const [only] = values;
    return values.size === 1 ? only : undefined;
  };
  const runId = shared((k) => k.runId);
  const sourceId = shared((k) => k.sourceId);
  return { ...(runId ? { runId } : {}), ...(sourceId ? { sourceId } : {}) };
}
