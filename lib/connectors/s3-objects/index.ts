import { ClassifiedError } from '../../retry/errors.js';
import type { Connector, ConnectorContext, ConnectorManifest, FetchedPage } from '../contract.js';
import { classifyS3 } from './classify.js';
import { type S3ObjectsConfig, s3ObjectsConfigSchema } from './config.js';
import { normalizeObject, type S3ObjectRecord } from './normalize.js';
import { addBodies, headObject, listObjects, s3BucketFor } from './objects.js';
import { decodeS3Position, encodeS3Position, listingWatermark } from './position.js';

export type { S3ObjectsConfig } from './config.js';
export { s3ObjectsConfigSchema } from './config.js';

/**
 * The `s3-objects` connector: the objects of a bucket (optionally under a prefix) as entities —
 * id = key, version = LastModified (ETag in the data), data = metadata (and the parsed body of small JSON
 * objects when `jsonBodies` is set). No HTTP of its own: the AWS SDK's S3 client, errors
 * classified by S3's error codes.
 *
 * **Ordering and the watermark.** ListObjectsV2 lists keys in a fixed order, and the position is
 * the last key delivered (`StartAfter`): a key never moves, so a resume is exact and a complete
 * listing is a stable catalog (reconciliation may tombstone). But key order is not modification
 * order, so an edit does not move an object ahead of the position: an incremental run lists every
 * key and loads only the objects modified at or after `since`, and its watermark is not the
 * latest LastModified it read (an object written mid-run at a key already passed would be hidden
 * by it) but the time the listing began, minus `clockSkewMarginSeconds`, down to the second — the
 * manifest says `orderedByKey`, and every page states that watermark.
 */
const manifest: ConnectorManifest = {
  name: 's3-objects',
  entityType: 'object',
  orderedByModifiedTime: false,
  orderedByKey: true,
  cursorComputableWithoutResponse: false,
};

/** Only objects modified at or after `since` (ISO, ms) are delivered; null: all. */
function modifiedSince(object: S3ObjectRecord, since: string | null): boolean {
  if (since === null) return true;
  const modified = Date.parse(object.lastModified);
  // A record with an unreadable time is delivered: normalization dead-letters it with its reason.
  return Number.isNaN(modified) || modified >= Date.parse(since);
}

async function fetchPage(
  config: S3ObjectsConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const position = decodeS3Position(cursor, Date.now());
  const bucket = s3BucketFor(config, ctx);
  const listed = await listObjects(bucket, config, position.after, ctx.signal);
  const changed = listed.objects.filter((object) => modifiedSince(object, ctx.since));
  const items = await addBodies(bucket, config, changed, ctx.signal);
  const last = listed.objects.at(-1)?.key;
  const done = !listed.truncated || last === undefined;
  return {
    items,
    nextCursor: done ? null : encodeS3Position({ after: last, startedAt: position.startedAt }),
    // S3 tells no totals; counting the keys would be a second full listing.
    remaining: done ? items.length : null,
    watermark: listingWatermark(position.startedAt, config.clockSkewMarginSeconds),
  };
}

async function fetchItem(config: S3ObjectsConfig, id: string, ctx: ConnectorContext): Promise<unknown> {
  if (id === '' || !id.startsWith(config.prefix)) {
    throw new ClassifiedError('permanent', `key \`${id.slice(0, 200)}\` is not under the source's prefix`);
  }
  return headObject(s3BucketFor(config, ctx), config, id, ctx.signal);
}

/** The `s3-objects` connector (see the module documentation and {@link s3ObjectsConfigSchema}). */
export const s3ObjectsConnector: Connector<S3ObjectsConfig> = {
  manifest,
  configSchema: s3ObjectsConfigSchema,
  manifestFor: () => manifest,
  // Which objects and what their data holds; page size and the margin only change how it is read.
  streamIdentity: (config) => ({
    bucket: config.bucket,
    prefix: config.prefix,
    region: config.region ?? null,
    jsonBodies: config.jsonBodies ?? null,
  }),
  fetchPage,
  fetchItem,
  normalize: (_config, raw) => normalizeObject(raw),
  classify: (error, now = Date.now()) => classifyS3(error, now),
};
