import {
  type _Object,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { ParseBudgetError, parseBudgetExcess } from '../../json/budget.js';
import { parseJson } from '../../json/lossless.js';
import { ClassifiedError } from '../../retry/errors.js';
import type { ConnectorContext } from '../contract.js';
import { EntityGoneError } from '../gone.js';
import { classifyS3 } from './classify.js';
import type { S3ObjectsConfig } from './config.js';
import type { S3ObjectRecord } from './normalize.js';

/** GetObject requests in flight per page when bodies are read. */
const BODY_CONCURRENCY = 8;

/** Storage classes whose objects must be restored before GetObject (S3 answers `InvalidObjectState`). */
const ARCHIVED = new Set(['GLACIER', 'DEEP_ARCHIVE']);

/**
 * The source's bucket as every request addresses it: the client for its region, and the bucket
 * with the account that must own it (`ExpectedBucketOwner`), so S3 answers 403 rather than serve
 * a same-named bucket of another account.
 */
export interface S3Bucket {
  readonly client: S3Client;
  readonly address: { readonly Bucket: string; readonly ExpectedBucketOwner?: string };
}

/** The source's {@link S3Bucket}, or a permanent error when the runtime wires no S3 client. */
export function s3BucketFor(config: S3ObjectsConfig, ctx: ConnectorContext): S3Bucket {
  if (!ctx.aws) {
    throw new ClassifiedError('permanent', 's3-objects needs AWS clients, and this runtime provides none');
  }
  const owner = ctx.aws.bucketOwner;
  return {
    client: ctx.aws.s3(config.region),
    address: { Bucket: config.bucket, ...(owner ? { ExpectedBucketOwner: owner } : {}) },
  };
}

/** One page of a ListObjectsV2 listing, in key order. */
export interface ListedPage {
  readonly objects: readonly S3ObjectRecord[];
  /** S3 holds more keys after the last one listed. */
  readonly truncated: boolean;
}

function iso(date: Date | undefined): string {
  return (date ?? new Date(Number.NaN)).toISOString();
}

function toRecord(object: _Object): S3ObjectRecord {
  return {
    key: object.Key ?? '',
    etag: object.ETag ?? '',
    lastModified: object.LastModified ? iso(object.LastModified) : '',
    size: object.Size ?? 0,
    ...(object.StorageClass ? { storageClass: object.StorageClass } : {}),
  };
}

/** Lists up to `pageSize` keys after `after` (StartAfter), under the prefix. */
export async function listObjects(
  bucket: S3Bucket,
  config: S3ObjectsConfig,
  after: string | null,
  signal: AbortSignal | undefined,
): Promise<ListedPage> {
  const output = await bucket.client.send(
    new ListObjectsV2Command({
      ...bucket.address,
      ...(config.prefix ? { Prefix: config.prefix } : {}),
      ...(after !== null ? { StartAfter: after } : {}),
      MaxKeys: config.pageSize,
    }),
    { abortSignal: signal },
  );
  return { objects: (output.Contents ?? []).map(toRecord), truncated: output.IsTruncated === true };
}

/** True when the source stores this object's body (`jsonBodies` configured, the key and size fit). */
function wantsBody(config: S3ObjectsConfig, object: S3ObjectRecord): boolean {
  return config.jsonBodies !== undefined && object.key.endsWith(config.jsonBodies.suffix);
}

function isNoSuchKey(error: unknown): boolean {
  return error instanceof Error && (error.name === 'NoSuchKey' || error.name === 'NotFound');
}

/**
 * The object with its JSON body, read with GetObject. The record then describes what GetObject
 * returned (its ETag and time), so data and version always belong together even when the object
 * changed since it was listed. Returns null when the object was deleted meanwhile. A permanent
 * failure (an archived object, access to it denied) or a body that is not JSON becomes
 * `bodyError` — an invalid record for this object only; transient failures throw (the page is retried).
 */
async function withBody(
  bucket: S3Bucket,
  config: S3ObjectsConfig,
  object: S3ObjectRecord,
  signal: AbortSignal | undefined,
): Promise<S3ObjectRecord | null> {
  const limit = config.jsonBodies?.maxBytes ?? 0;
  if (object.size > limit) return { ...object, bodySkipped: 'too_large' };
  if (object.storageClass !== undefined && ARCHIVED.has(object.storageClass)) {
    return { ...object, bodySkipped: 'archived' };
  }
  let output: GetObjectCommandOutput;
  try {
    output = await bucket.client.send(new GetObjectCommand({ ...bucket.address, Key: object.key }), {
      abortSignal: signal,
    });
  } catch (error) {
    if (isNoSuchKey(error)) return null;
    const classification = classifyS3(error, Date.now());
    if (classification.errorClass === 'transient') throw error;
    return { ...object, bodyError: `body not readable: ${classification.reason}` };
  }
  const current: S3ObjectRecord = {
    ...object,
    etag: output.ETag ?? object.etag,
    lastModified: output.LastModified ? iso(output.LastModified) : object.lastModified,
    size: output.ContentLength ?? object.size,
    ...(output.ContentType ? { contentType: output.ContentType } : {}),
  };
  if (current.size > limit) {
    (output.Body as { destroy?: () => void } | undefined)?.destroy?.();
    return { ...current, bodySkipped: 'too_large' };
  }
  const text = (await output.Body?.transformToString()) ?? '';
  // Bounded in memory as well as in bytes: a body over the parse budget is this record's problem.
  const excess = parseBudgetExcess(text);
  if (excess) return { ...current, bodyError: `body ${new ParseBudgetError(excess).message}` };
  try {
    return { ...current, body: parseJson(text) };
  } catch {
    return { ...current, bodyError: 'body is not valid JSON' };
  }
}

/** Adds bodies where configured; objects deleted since the listing are dropped (they are gone). */
export async function addBodies(
  bucket: S3Bucket,
  config: S3ObjectsConfig,
  objects: readonly S3ObjectRecord[],
  signal: AbortSignal | undefined,
): Promise<S3ObjectRecord[]> {
  if (config.jsonBodies === undefined) return [...objects];
  const limit = pLimit(BODY_CONCURRENCY);
  const read = await Promise.all(
    objects.map((object) =>
      wantsBody(config, object) ? limit(() => withBody(bucket, config, object, signal)) : object,
    ),
  );
  return read.filter((object): object is S3ObjectRecord => object !== null);
}

/**
 * One object by key (HeadObject, plus its body when configured).
 *
 * @throws EntityGoneError when S3 says the key does not exist (`NoSuchKey` / `NotFound`).
 */
export async function headObject(
  bucket: S3Bucket,
  config: S3ObjectsConfig,
  key: string,
  signal: AbortSignal | undefined,
): Promise<S3ObjectRecord> {
  let record: S3ObjectRecord;
  try {
    const output = await bucket.client.send(new HeadObjectCommand({ ...bucket.address, Key: key }), {
      abortSignal: signal,
    });
    record = {
      key,
      etag: output.ETag ?? '',
      lastModified: output.LastModified ? iso(output.LastModified) : '',
      size: output.ContentLength ?? 0,
      ...(output.StorageClass ? { storageClass: output.StorageClass } : {}),
      ...(output.ContentType ? { contentType: output.ContentType } : {}),
    };
  } catch (error) {
    if (isNoSuchKey(error)) {
      throw new EntityGoneError(key, `s3://${config.bucket}/${key} does not exist`, { cause: error });
    }
    throw error;
  }
  if (!wantsBody(config, record)) return record;
  const withItsBody = await withBody(bucket, config, record, signal);
  if (withItsBody === null) {
    throw new EntityGoneError(key, `s3://${config.bucket}/${key} does not exist`);
  }
  return withItsBody;
}
