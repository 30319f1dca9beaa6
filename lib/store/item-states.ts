import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';

/** What a page needs to know of a stored item to decide whether, and how, to write it. */
export interface StoredState {
  readonly version: string;
  readonly contentHash?: string;
  readonly tombstonedAt?: number;
}

/** BatchGetItem takes at most this many keys a request. */
const BATCH_KEYS = 100;

/**
 * The stored state of `entityIds` (absent ids are not stored): one strongly consistent
 * BatchGetItem per 100 ids, only version, content hash and tombstone projected, unprocessed keys
 * retried with backoff.
 *
 * Strongly consistent because the read decides a skip that no condition judges: an entity whose
 * content is unchanged is not written at all. A lagging answer from before a tombstone (a run
 * that marked it deleted a moment ago) would show it live and unchanged, and the page would skip
 * it, leaving a live entity tombstoned.
 */
export async function readStoredStates(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sourceId: string,
  entityIds: readonly string[],
): Promise<Map<string, StoredState>> {
  const states = new Map<string, StoredState>();
  const unique = [...new Set(entityIds)];
  for (let i = 0; i < unique.length; i += BATCH_KEYS) {
    let keys: Record<string, unknown>[] | undefined = unique
      .slice(i, i + BATCH_KEYS)
      .map((entityId) => ({ sourceId, entityId }));
    for (let attempt = 0; keys && keys.length > 0; attempt++) {
      if (attempt > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
      const result: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: keys,
              ProjectionExpression: 'entityId, #version, contentHash, tombstonedAt',
              ExpressionAttributeNames: { '#version': 'version' },
              ConsistentRead: true,
            },
          },
        }),
      );
      for (const item of result.Responses?.[tableName] ?? []) {
        const { entityId, version, contentHash, tombstonedAt } = item as StoredState & { entityId: string };
        states.set(entityId, {
          version,
          ...(contentHash === undefined ? {} : { contentHash }),
          ...(tombstonedAt === undefined ? {} : { tombstonedAt }),
        });
      }
      keys = result.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return states;
}

/** Orders versions as DynamoDB compares strings: by their UTF-8 bytes. */
export function compareVersions(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
