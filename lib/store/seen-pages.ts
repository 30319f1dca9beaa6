import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './errors.js';

/**
 * What a reconciliation listing served, one record per listed page instead of a write on every
 * entity (docs/items.md explains why this loses nothing). Records are items of the SyncRuns table
 * beside their run, like stored positions: keyed by run, epoch, chain and page, so the tombstone
 * pass finds them by key without a query. The ids are stored sorted and gzipped; a page whose ids
 * do not fit one item (DynamoDB's 400 KB) is stored in parts, written before the head that names
 * them. Every record expires after {@link SEEN_RETENTION_DAYS}.
 *
 * Seen records carry no `sourceId`, `state` or `activeShard`, so the by-source and active-run
 * indexes never list them, and the operators' scan of runs (runs have a `state`) filters them out.
 */

/** How long seen records are kept (DynamoDB TTL on `expiresAt`): far past any run's end. */
export const SEEN_RETENTION_DAYS = 7;

/** The key prefix of seen records in the SyncRuns table (run ids are ULIDs: never this). */
export const SEEN_KEY_PREFIX = 'seen#';

/** Uncompressed bytes of ids per stored part: gzip never grows them past the 400 KB item limit. */
export const SEEN_PART_BYTES = 300_000;

/** Which records: one epoch of one chain of a run (a fenced epoch's records are another set). */
export interface SeenScope {
  readonly runId: string;
  readonly epoch: number;
  /** `run` for the run's own chain, `p<index>` for a partition's. */
  readonly chain: string;
}

type Head = { readonly digest: string; readonly ids?: Uint8Array; readonly parts?: number };

/**
 * Orders ids as DynamoDB orders string keys: by their UTF-8 bytes, which is code point order.
 * JavaScript's `<` compares UTF-16 code units, which differs only where a surrogate (a code point
 * past U+FFFF) meets a unit of U+E000–U+FFFF: moving surrogates above those gives code point
 * order without encoding anything (a merge sorts millions of ids).
 */
export function compareIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** `ids` without repeats, in key order. */
export function sortedIds(ids: Iterable<string>): string[] {
  return [...new Set(ids)].sort(compareIds);
}

/** Sorted ids in parts of at most {@link SEEN_PART_BYTES} bytes (as JSON, before gzip). */
export function partsOf(ids: readonly string[]): string[][] {
  const parts: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const size = Buffer.byteLength(JSON.stringify(id), 'utf8') + 1;
    if (bytes + size > SEEN_PART_BYTES && current.length > 0) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(id);
    bytes += size;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Ids as stored: a JSON array, gzipped (ids compress well; any character survives). */
export const pack = (ids: readonly string[]): Uint8Array =>
  gzipSync(Buffer.from(JSON.stringify(ids), 'utf8'));
/** Stored ids back. */
export const unpack = (stored: Uint8Array): string[] =>
  JSON.parse(gunzipSync(stored).toString('utf8')) as string[];

/** The time a seen record expires at (DynamoDB TTL, seconds). */
export function seenExpiry(now: number): number {
  return Math.floor(now / 1_000) + SEEN_RETENTION_DAYS * 86_400;
}

/** Seen records by key, in the SyncRuns table. */
export class SeenPageStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /**
   * Records that page `page` of `scope` listed `ids`: one write. Idempotent: a delivery that listed
   * the same ids writes the same record; one that listed others (the page fetched again after a
   * crash, the source edited meanwhile) adds its ids to the record, never replaces it, so an entity
   * any delivery saw stays seen.
   */
  async put(scope: SeenScope, page: number, ids: readonly string[], now: number): Promise<void> {
    let merged = sortedIds(ids);
    let replaces: string | null = null;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.putHead(scope, page, merged, replaces, now);
        return;
      } catch (error) {
        // Another delivery wrote the record: add its ids (bounded: each round only grows the set).
        if (!isConditionFailure(error) || attempt >= 4) throw error;
      }
      const stored = await this.getHead(scope, page);
      if (!stored) continue;
      const union = sortedIds([...merged, ...(await this.idsOf(scope, page, stored))]);
      if (digestOf(union) === stored.digest) return;
      merged = union;
      replaces = stored.digest;
    }
  }

  /** Every id pages `1..lastPage` of `scope` listed, in key order (a page with no record listed none). */
  async listed(scope: SeenScope, lastPage: number): Promise<string[]> {
    const keys = Array.from({ length: lastPage }, (_, i) => headKey(scope, i + 1));
    const heads = await batchGetByKey(this.doc, this.tableName, keys);
    const ids: string[] = [];
    for (const [index, key] of keys.entries()) {
      const head = heads.get(key);
      // A loop, not a spread: a page in parts can hold more ids than a call takes arguments.
      if (head) for (const id of await this.idsOf(scope, index + 1, head as unknown as Head)) ids.push(id);
    }
    return sortedIds(ids);
  }

  private async idsOf(scope: SeenScope, page: number, head: Head): Promise<string[]> {
    if (head.ids) return unpack(head.ids);
    const keys = Array.from({ length: head.parts ?? 0 }, (_, i) => partKey(scope, page, head.digest, i));
    const parts = await batchGetByKey(this.doc, this.tableName, keys);
    return keys.flatMap((key) => {
      const part = parts.get(key);
      if (!part) throw new Error(`seen record part ${key} is missing`);
      return unpack(part.ids as Uint8Array);
    });
  }

  private async putHead(
    scope: SeenScope,
    page: number,
    ids: readonly string[],
    replaces: string | null,
    now: number,
  ): Promise<void> {
    const digest = digestOf(ids);
    const expiresAt = seenExpiry(now);
    const parts = partsOf(ids);
    const base = { seenOf: scope.runId, epoch: scope.epoch, page, expiresAt };
    // Parts are named by the digest of the whole: written before the head that points at them.
    if (parts.length > 1) {
      for (const [index, part] of parts.entries())
        await this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { runId: partKey(scope, page, digest, index), ids: pack(part), ...base },
          }),
        );
    }
    const content = parts.length > 1 ? { parts: parts.length } : { ids: pack(parts[0] ?? []) };
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { runId: headKey(scope, page), digest, count: ids.length, ...content, ...base },
        // The record as this write expects to find it: none, the same ids (a redelivery writes the
        // same record) or the one whose ids it merged; any other is merged first (see `put`).
        ConditionExpression: 'attribute_not_exists(runId) OR digest = :expected',
        ExpressionAttributeValues: { ':expected': replaces ?? digest },
      }),
    );
  }

  private async getHead(scope: SeenScope, page: number): Promise<Head | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { runId: headKey(scope, page) },
        ConsistentRead: true,
      }),
    );
    return Item as Head | undefined;
  }
}

/** Items of `tableName` by `runId` key (100 keys a request, unprocessed keys retried), strongly consistent. */
export async function batchGetByKey(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < keys.length; i += 100) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + 100).map((runId) => ({ runId }));
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
      const result: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
      );
      for (const item of result.Responses?.[tableName] ?? []) found.set(item.runId as string, item);
      pending = result.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return found;
}

function digestOf(ids: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(ids)).digest('base64url').slice(0, 22);
}

/** The key every record of `scope` starts with. */
export function scopeKey(scope: SeenScope): string {
  return `${SEEN_KEY_PREFIX}${scope.runId}#${scope.epoch}#${scope.chain}`;
}

function headKey(scope: SeenScope, page: number): string {
  return `${scopeKey(scope)}#${page}`;
}

function partKey(scope: SeenScope, page: number, digest: string, index: number): string {
  return `${headKey(scope, page)}#${digest}#${index}`;
}
