import { type DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { INDEX } from '../resources/definitions.js';
import type { RunMode, RunOutcome, RunState } from '../run/model.js';
import { decodeCursor, encodeCursor } from './paging.js';

/*
 * Reads of run history for people (the source view, the operators' listing): never on the run
 * path, so they live apart from the run repository's writes (sync-runs.ts).
 */

/** How many of a source's newest runs {@link SyncRunStore.recentOf} reads looking for a success. */
export const RECENT_RUNS_READ = 100;

/** A run in a source's history: what the source view shows of its last and last successful run. */
export interface RunSummary {
  readonly runId: string;
  readonly state: RunState;
  readonly mode: RunMode;
  readonly createdAt: number;
  readonly finishedAt?: number | null;
  /** Fixed when it ended (absent while active, and on runs that ended before outcomes were kept). */
  readonly outcome?: RunOutcome;
}

/**
 * A source's last run and its last successful one, for the source view. Reads the newest runs
 * (a few attributes each) until a success shows, at most {@link RECENT_RUNS_READ} of them: a
 * source whose last success is older than that shows none.
 */
export async function recentRunsOf(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sourceId: string,
): Promise<{ last: RunSummary | null; lastSuccess: RunSummary | null }> {
  let last: RunSummary | null = null;
  let start: Record<string, unknown> | undefined;
  let read = 0;
  do {
    const { Items = [], LastEvaluatedKey } = await doc.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: INDEX.runsBySource,
        KeyConditionExpression: 'sourceId = :sourceId',
        ExpressionAttributeValues: { ':sourceId': sourceId },
        ExpressionAttributeNames: { '#state': 'state', '#mode': 'mode' },
        ProjectionExpression: 'runId, #state, #mode, createdAt, finishedAt, outcome',
        ScanIndexForward: false,
        Limit: 25,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of Items) {
      const run = item as RunSummary;
      last ??= run;
      if (run.state === 'succeeded') return { last, lastSuccess: run };
    }
    read += Items.length;
    start = LastEvaluatedKey;
  } while (start && read < RECENT_RUNS_READ);
  return { last, lastSuccess: null };
}

/**
 * Runs of every source, optionally in one state, a page at a time. A scan (the table is keyed
 * by run): pages are filled up to `limit` matches within a bound on round trips, newest first
 * within a page, in no order across pages. For operators; nothing on the run path calls it.
 */
export async function scanRuns(
  doc: DynamoDBDocumentClient,
  tableName: string,
  options: { state?: RunState; limit?: number; cursor?: string } = {},
): Promise<{ items: Record<string, unknown>[]; cursor: string | undefined }> {
  const limit = options.limit ?? 50;
  const items: Record<string, unknown>[] = [];
  let start = decodeCursor(options.cursor);
  for (let round = 0; round < 10 && items.length < limit; round++) {
    const { Items = [], LastEvaluatedKey } = await doc.send(
      new ScanCommand({
        TableName: tableName,
        // Every run has a state; the chains and positions stored in the same table have none.
        ...(options.state
          ? {
              FilterExpression: '#state = :state',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: { ':state': options.state },
            }
          : {
              FilterExpression: 'attribute_exists(#state)',
              ExpressionAttributeNames: { '#state': 'state' },
            }),
        // A filtered scan may return fewer than it reads: ask for more per round.
        Limit: Math.max(limit - items.length, 100),
        ExclusiveStartKey: start,
      }),
    );
    let cut = false;
    for (const item of Items) {
      if (items.length === limit) {
        cut = true;
        break;
      }
      items.push(item);
    }
    start = cut ? { runId: items.at(-1)!.runId } : LastEvaluatedKey;
    if (!start) break;
  }
  items.sort((a, b) => ((a.runId as string) < (b.runId as string) ? 1 : -1));
  return { items, cursor: encodeCursor(start) };
}
