import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from './paging.js';

/** What a page needs to know of a stored item to decide whether, and how, to write it. */
export interface StoredState {
  readonly version: string;
  readonly contentHash?: string;
  readonly tombstonedAt?: number;
}

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
  const keys = [...new Set(entityIds)].map((entityId) => ({ sourceId, entityId }));
  const projection = {
    expression: 'entityId, #version, contentHash, tombstonedAt',
    names: { '#version': 'version' },
  };
  for (const item of await batchGetAll<StoredState & { entityId: string }>(
    doc,
    tableName,
    keys,
    projection,
  )) {
    const { entityId, version, contentHash, tombstonedAt } = item;
    states.set(entityId, {
      version,
      ...(contentHash === undefined ? {} : { contentHash }),
      ...(tombstonedAt === undefined ? {} : { tombstonedAt }),
    });
  }
  return states;
}

/** Orders versions as DynamoDB compares strings: by their UTF-8 bytes. */
export function compareVersions(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
