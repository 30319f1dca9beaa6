import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  batchGetByKey,
  compareIds,
  pack,
  partsOf,
  type SeenPageStore,
  type SeenScope,
  scopeKey,
  seenExpiry,
  unpack,
} from './seen-pages.js';

/**
 * The seen records of a listing, re-sorted by key for the tombstone pass. A listing's pages hold
 * ids in the source's order (by modification time, often), while the pass walks the stored keys in
 * key order: a slice of 500 keys would need every page's record. So the pass's first slice merges
 * them once — all page records read, the ids sorted and cut into chunks of at most
 * `SEEN_PART_BYTES` bytes, each an item — and writes an index of where each chunk starts.
 * Every later slice reads the index and the one or two chunks its keys fall in.
 *
 * The merge is deterministic: a slice delivered twice writes the same chunks and index again.
 * It holds the run's ids in memory once (tens of bytes each), which suits listings of millions.
 */

type Index = { readonly firsts: Uint8Array; readonly chunks: number };

/** The merged ids of a listing, by key range. */
export class SeenIndex {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly pages: SeenPageStore,
  ) {}

  /**
   * The ids among `[first, last]` (key order) that pages `1..lastPage` of `scope` listed; merges
   * the page records first when no index exists yet.
   */
  async seenBetween(
    scope: SeenScope,
    lastPage: number,
    first: string,
    last: string,
    now: number,
  ): Promise<Set<string>> {
    const index = (await this.index(scope)) ?? (await this.merge(scope, lastPage, now));
    const firsts = unpack(index.firsts);
    const wanted = firsts.flatMap((start, i) => {
      const next = firsts[i + 1];
      const startsAfter = compareIds(start, last) > 0;
      const endsBefore = next !== undefined && compareIds(next, first) <= 0;
      return startsAfter || endsBefore ? [] : [chunkKey(scope, i)];
    });
    const chunks = await batchGetByKey(this.doc, this.tableName, wanted);
    const seen = new Set<string>();
    for (const key of wanted) {
      const chunk = chunks.get(key);
      if (!chunk) throw new Error(`seen chunk ${key} is missing`);
      for (const id of unpack(chunk.ids as Uint8Array)) seen.add(id);
    }
    return seen;
  }

  private async index(scope: SeenScope): Promise<Index | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { runId: indexKey(scope) }, ConsistentRead: true }),
    );
    return Item as Index | undefined;
  }

  private async merge(scope: SeenScope, lastPage: number, now: number): Promise<Index> {
    const ids = await this.pages.listed(scope, lastPage);
    const chunks = partsOf(ids);
    const base = { seenOf: scope.runId, epoch: scope.epoch, expiresAt: seenExpiry(now) };
    for (const [i, chunk] of chunks.entries()) {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { runId: chunkKey(scope, i), ids: pack(chunk), ...base },
        }),
      );
    }
    // Written last: an index names only chunks already written.
    const firsts = pack(chunks.map((chunk) => chunk[0]!));
    const index: Index = { firsts, chunks: chunks.length };
    await this.doc.send(
      new PutCommand({ TableName: this.tableName, Item: { runId: indexKey(scope), ...index, ...base } }),
    );
    return index;
  }
}

function indexKey(scope: SeenScope): string {
  return `${scopeKey(scope)}#merged`;
}

function chunkKey(scope: SeenScope, index: number): string {
  return `${scopeKey(scope)}#merged#${index}`;
}
