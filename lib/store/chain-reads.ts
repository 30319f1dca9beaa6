import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SyncRun } from '../run/model.js';
import { type ChainRef, chainKey, chainRefs, type StoredChain, toChain } from './chain-item.js';
import { batchGetAll } from './paging.js';
import { toSyncRun } from './run-item.js';

/** The chain items of `refs`, read strongly consistent, by key (a missing one is left out). */
export async function readChains(
  doc: DynamoDBDocumentClient,
  tableName: string,
  refs: readonly ChainRef[],
): Promise<Map<string, StoredChain[]>> {
  const byRun = new Map<string, StoredChain[]>();
  const owners = new Map(refs.map((ref) => [chainKey(ref).runId, ref.runId]));
  for (const item of await batchGetAll(doc, tableName, refs.map(chainKey))) {
    const runId = owners.get(item.runId as string);
    if (runId === undefined) continue;
    byRun.set(runId, [...(byRun.get(runId) ?? []), toChain(item)]);
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
