import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';

/** One page of a listing, with an opaque cursor for the next page (absent at the end). */
export interface Page<T> {
  readonly items: T[];
  readonly cursor: string | undefined;
}

/** Raised for a cursor that was not produced by {@link encodeCursor}. */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
}

/** Encodes DynamoDB's LastEvaluatedKey as an opaque URL-safe cursor. */
export function encodeCursor(key: Record<string, unknown> | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString('base64url') : undefined;
}

/** Decodes a cursor from {@link encodeCursor}; a tampered one fails with {@link InvalidCursorError}. */
export function decodeCursor(cursor: string | undefined): Record<string, unknown> | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // A DynamoDB key: a few named string or number attributes, nothing nested.
    if (
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      Object.keys(value).length <= 4 &&
      Object.values(value).every((v) => typeof v === 'string' || typeof v === 'number')
    )
      return value as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new InvalidCursorError('the pagination cursor is not valid');
}

/**
 * Deletes every item a query finds, 25 keys per BatchWriteItem (retrying unprocessed keys).
 * Returns how many items the query found. `keyOf` picks the table key from a (projected) item,
 * or several keys: the item's and those of items stored beside it.
 */
export async function deleteAllQueried(
  doc: DynamoDBDocumentClient,
  input: QueryCommandInput,
  keyOf: (item: Record<string, unknown>) => Record<string, unknown> | Record<string, unknown>[],
): Promise<number> {
  const items = await queryAll(doc, input);
  const keys = items.flatMap((item) => {
    const key = keyOf(item);
    return Array.isArray(key) ? key : [key];
  });
  await deleteKeys(doc, input.TableName!, keys);
  return items.length;
}

/** BatchGetItem's bound on keys per request. */
export const BATCH_GET_LIMIT = 100;

/**
 * The items of `keys`, read strongly consistent (a lagging read would miss what was written a
 * moment ago), {@link BATCH_GET_LIMIT} keys a request, unprocessed keys (throttling) asked again
 * after a growing pause. A missing item is left out; the order is DynamoDB's.
 */
export async function batchGetAll<T = Record<string, unknown>>(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  projection?: { readonly expression: string; readonly names?: Record<string, string> },
): Promise<T[]> {
  const found: T[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_LIMIT) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + BATCH_GET_LIMIT);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
      const answer: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: pending,
              ConsistentRead: true,
              ...(projection ? { ProjectionExpression: projection.expression } : {}),
              ...(projection?.names ? { ExpressionAttributeNames: projection.names } : {}),
            },
          },
        }),
      );
      found.push(...((answer.Responses?.[tableName] ?? []) as T[]));
      pending = answer.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return found;
}

/** Deletes items by key, 25 keys per BatchWriteItem (retrying unprocessed keys). */
export async function deleteKeys(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
): Promise<void> {
  for (let i = 0; i < keys.length; i += 25) {
    let requests: { DeleteRequest: { Key: Record<string, unknown> } }[] | undefined = keys
      .slice(i, i + 25)
      .map((key) => ({ DeleteRequest: { Key: key } }));
    for (let attempt = 0; requests && requests.length > 0; attempt++) {
      if (attempt > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
      const { UnprocessedItems } = await doc.send(
        new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
      );
      requests = UnprocessedItems?.[tableName] as typeof requests;
    }
  }
}

/** Runs a query to the end, following LastEvaluatedKey, and returns every item. */
export async function queryAll(
  doc: DynamoDBDocumentClient,
  input: QueryCommandInput,
): Promise<Record<string, unknown>[]> {
  const all: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    all.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return all;
}

/** Counts what a query matches (`Select: COUNT`), following LastEvaluatedKey to the end. */
export async function countAll(doc: DynamoDBDocumentClient, input: QueryCommandInput): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new QueryCommand({ ...input, Select: 'COUNT', ExclusiveStartKey: start }));
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}
