import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Stream positions too large to travel on a page message (see lib/engine/chain/positions.ts), kept as
 * items of the SyncRuns table beside their run. A position item is keyed by its reference —
 * run, chain, page and a digest of the position — so it is written once and never changed: two
 * deliveries of one page that computed the same position write the same item, and a losing
 * delivery that computed another one writes another item, which nothing refers to. The
 * position is stored gzipped (ids and tokens compress well) and expires after
 * {@link POSITION_RETENTION_DAYS}, long after any run could continue from it (a checkpoint older
 * than 6 hours is discarded) and long enough for "retry failed" to fetch a page filed with it.
 *
 * Position items carry no `sourceId`, `state` or `activeShard`, so the by-source and active-run
 * indexes never list them, and the operators' scan of runs filters them out.
 */

/** How long a stored position is kept (DynamoDB TTL on `expiresAt`). */
export const POSITION_RETENTION_DAYS = 30;

/** The key prefix of position items in the SyncRuns table (run ids are ULIDs: never this). */
export const POSITION_KEY_PREFIX = 'position#';

/** Which stored position: the run and chain it belongs to, the page it leads to, its digest. */
export interface PositionRef {
  readonly runId: string;
  /** `run` for the run's own chain, `p<index>` for a partition's. */
  readonly chain: string;
  readonly page: number;
  readonly digest: string;
}

/** The digest a stored position is addressed and checked by. */
export function positionDigest(position: string): string {
  return createHash('sha256').update(position).digest('base64url').slice(0, 22);
}

/** The bytes a position takes in its item: what the item limit applies to. */
export function storedBytes(position: string): Buffer {
  return gzipSync(Buffer.from(position, 'utf8'));
}

/** Positions by reference, in the SyncRuns table. */
export class PositionStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** Stores `position` under `ref` (idempotent: the key names its content). */
  async put(ref: PositionRef, stored: Buffer, now: number): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          runId: keyOf(ref),
          position: stored,
          positionOf: ref.runId,
          page: ref.page,
          expiresAt: Math.floor(now / 1_000) + POSITION_RETENTION_DAYS * 86_400,
        },
      }),
    );
  }

  /** The position stored under `ref`; undefined when it is gone (expired) or does not match its digest. */
  async get(ref: PositionRef): Promise<string | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { runId: keyOf(ref) }, ConsistentRead: true }),
    );
    const stored = Item?.position as Uint8Array | undefined;
    if (!stored) return undefined;
    const position = gunzipSync(stored).toString('utf8');
    return positionDigest(position) === ref.digest ? position : undefined;
  }
}

function keyOf(ref: PositionRef): string {
  return `${POSITION_KEY_PREFIX}${ref.runId}#${ref.chain}#${ref.page}#${ref.digest}`;
}
