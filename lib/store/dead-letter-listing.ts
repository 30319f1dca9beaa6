import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { INDEX } from '../resources/definitions.js';
import type { DeadLetterState } from './dead-letter-kinds.js';
import { type DeadLetter, type DeadLetterFilter, filterConditions } from './dead-letter-model.js';
import { decodeCursor, encodeCursor, type Page } from './paging.js';

/** Filter of every read that means "open entries": no state written. */
export const OPEN_FILTER = 'attribute_not_exists(#state)';

/** Round trips one filtered listing page may take before it answers with what it has. */
const MAX_LIST_ROUNDS = 10;
/** Entries read per round of a filtered listing (the filter drops some after the read). */
const FILTERED_READ = 100;

/** Options of {@link listDeadLetters}: a page, a filter, and which state. */
export interface ListDeadLettersOptions extends DeadLetterFilter {
  readonly limit?: number;
  readonly cursor?: string | null;
  readonly failedBefore?: number;
  readonly state?: 'open' | DeadLetterState;
  /**
   * Read the source's entries from the table, consistently, also with `runId` (then a filter
   * rather than the index, which is never consistent): for a run that walks the listing by the
   * table's key, such as a filtered retry-failed run.
   */
  readonly consistent?: boolean;
}

/**
 * Open entries of a source, a page at a time, optionally only those matching a
 * {@link DeadLetterFilter}; with `state: 'discarded'`, the discarded ones instead (the audit trail).
 * By run it reads the `deadLettersByRun` index (unless `consistent`); otherwise the table, consistently.
 */
export async function listDeadLetters(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sourceId: string,
  options: ListDeadLettersOptions,
): Promise<Page<DeadLetter>> {
  const discarded = options.state === 'discarded';
  const byRun = options.runId !== undefined && !options.consistent;
  const filter = filterConditions({
    ...(options.runId !== undefined && !byRun ? { runId: options.runId } : {}),
    ...(options.errorClass ? { errorClass: options.errorClass } : {}),
    ...(options.reasonMatch ? { reasonMatch: options.reasonMatch } : {}),
  });
  const filters: string[] = [discarded ? '#state = :discarded' : OPEN_FILTER, ...filter.conditions];
  const values: Record<string, unknown> = {
    ...(discarded ? { ':discarded': 'discarded' } : {}),
    ...filter.values,
  };
  if (options.failedBefore !== undefined) {
    filters.push('firstFailedAt <= :before');
    values[':before'] = options.failedBefore;
  }
  if (byRun) filters.push('sourceId = :sourceId');
  const limit = options.limit ?? 50;
  const items: DeadLetter[] = [];
  let start = decodeCursor(options.cursor ?? undefined);
  // DynamoDB applies Limit before the filter, so one query may match nothing and still have
  // more: keep reading (asking only for what is missing, so a page never overshoots) until the
  // page is full or the listing ends, within a bound on round trips.
  for (let round = 0; round < MAX_LIST_ROUNDS; round++) {
    const { Items = [], LastEvaluatedKey } = await doc.send(
      new QueryCommand({
        TableName: tableName,
        ...(byRun ? { IndexName: INDEX.deadLettersByRun } : {}),
        KeyConditionExpression: byRun ? 'runId = :runId' : 'sourceId = :sourceId',
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':sourceId': sourceId,
          ...(byRun ? { ':runId': options.runId } : {}),
          ...values,
        },
        Limit: Math.max(limit - items.length, FILTERED_READ),
        ExclusiveStartKey: start,
        // By source the listing is the dead-letter retry's slice: a lagging read would skip an
        // entry filed a moment ago. By run it reads an index, which is never consistent: an
        // operator's listing, which the next read completes.
        ...(byRun ? {} : { ConsistentRead: true }),
      }),
    );
    for (const item of Items) {
      if (items.length === limit) break;
      items.push(item as DeadLetter);
    }
    start = LastEvaluatedKey;
    if (items.length === limit && Items.length > 0) {
      // A full page: continue after its last item (the query may have read past it).
      const last = items.at(-1)!;
      start = byRun
        ? { sourceId: last.sourceId, entryId: last.entryId, runId: last.runId }
        : { sourceId: last.sourceId, entryId: last.entryId };
      if (!LastEvaluatedKey && last === Items.at(-1)) start = undefined;
      break;
    }
    if (!start) break;
  }
  return { items, cursor: encodeCursor(start) };
}
