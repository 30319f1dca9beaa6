import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { INDEX } from '../resources/definitions.js';
import { countAll } from './paging.js';

/*
 * The counts of a run's dead letters (the store is dead-letters.ts): the live one, of its entries
 * still open, and the one its outcome fixes when it ends, of every entry it filed.
 */

/**
 * How many entries are open whose last failure was in `runId`: the run's live "K in DLQ", item
 * and page entries alike, counted on the by-run index where `dlq list --run` lists them, so the
 * two always agree.
 */
export function countOpenOfRun(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sourceId: string,
  runId: string,
): Promise<number> {
  return countAll(doc, {
    TableName: tableName,
    IndexName: INDEX.deadLettersByRun,
    KeyConditionExpression: 'runId = :runId',
    FilterExpression: 'sourceId = :sourceId AND attribute_not_exists(#state)',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':runId': runId, ':sourceId': sourceId },
  });
}

/**
 * How many entries, open or discarded, have their last failure in `runId`: the dead letters the
 * run filed, as its outcome fixes them when it ends (`RunLifecycle`). Read from the table itself,
 * strongly consistent — not from the by-run index, which may not show yet what the run's last
 * page filed a moment ago. It reads every entry of the source once per run end: dead letters are
 * a triage backlog, and the end is the one moment their count is taken.
 */
export function countFiledBy(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sourceId: string,
  runId: string,
): Promise<number> {
  return countAll(doc, {
    TableName: tableName,
    KeyConditionExpression: 'sourceId = :sourceId',
    FilterExpression: 'runId = :runId',
    ExpressionAttributeValues: { ':sourceId': sourceId, ':runId': runId },
    ConsistentRead: true,
  });
}
