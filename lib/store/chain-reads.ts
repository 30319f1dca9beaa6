import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { SyncRun } from '../run/model.js';
import { type ChainRef, chainKey, chainRefs, type StoredChain, toChain } from './chain-item.js';
import { toSyncRun } from './run-item.js';

/** BatchGetItem's bound on keys per request. */
const BATCH_GET_LIMIT = 100;

/**
 * The chain items of `refs`, read strongly consistent, by key (a missing one is left out).
 * Unprocessed keys (throttling) are asked again.
 */
export async function readChains(
  doc: DynamoDBDocumentClient,
  tableName: string,
  refs: readonly ChainRef[],
): Promise<Map<string, StoredChain[]>> {
  const byRun = new Map<string, StoredChain[]>();
  const owners = new Map(refs.map((ref) => [chainKey(ref).runId, ref.runId]));
  for (let i = 0; i < refs.length; i += BATCH_GET_LIMIT) {
    let keys: Record<string, unknown>[] | undefined = refs.slice(i, i + BATCH_GET_LIMIT).map(chainKey);
    for (let attempt = 0; keys && keys.length > 0; attempt++) {
      if (attempt > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
      const answer: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
      );
      const { Responses, UnprocessedKeys } = answer;
      for (const item of Responses?.[tableName] ?? []) {
        const runId = owners.get(item.runId as string);
        if (runId === undefined) continue;
        byRun.set(runId, [...(byRun.get(runId) ?? []), toChain(item)]);
      }
      keys = UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return byRun;
}

/** The chains a stored run item has (none for a run stored with its chains inline). */
export function chainRefsOfItem(item: Record<string, unknown>): ChainRef[] {
  if (item.nextPage !== undefined) return [];
  return chainRefs(item.runId as string, (item.partitionCount ?? 0) as number);
}

/** Run items with their chains, as the model. */
export async function withChains(
  doc: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Record<string, unknown>[],
): Promise<SyncRun[]> {
  const chains = await readChains(doc, tableName, items.flatMap(chainRefsOfItem));
  return items.map((item) => toSyncRun(item, chains.get(item.runId as string) ?? []));
}
