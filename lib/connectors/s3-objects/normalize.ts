import type { Normalized } from '../contract.js';
import { isRecord, toIsoTimestamp } from '../values.js';

/**
 * The raw record the connector hands the engine for one object: what the listing (or HeadObject /
 * GetObject) said about it, as JSON (the SDK's `Date`s as ISO strings), so a dead letter's payload
 * excerpt shows it as is.
 */
export interface S3ObjectRecord {
  readonly key: string;
  /** The ETag as S3 sends it, quotes included. */
  readonly etag: string;
  /** ISO 8601 UTC. */
  readonly lastModified: string;
  readonly size: number;
  readonly storageClass?: string;
  readonly contentType?: string;
  /** The parsed body (`jsonBodies`). */
  readonly body?: unknown;
  /** Why the body was not stored: `too_large`, `archived`, or the body read failed (an invalid record). */
  readonly bodySkipped?: 'too_large' | 'archived';
  readonly bodyError?: string;
}

/** The ETag without its quotes (`"9b2c…"` → `9b2c…`; multipart ETags keep their `-N`). */
export function bareEtag(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}

/**
 * The version of an object: its modification time (`2024-05-01T12:00:00.000Z`), and nothing else.
 * S3 stamps times to the second, so two writes of one key within a second share a time and
 * their ETags (content hashes) say nothing about which came last. Equal versions are settled by
 * the item store's writer rule instead — the later run (or epoch) that read the object wins — so
 * the next run that lists the key stores its latest content. The ETag stays in the data.
 */
export function objectVersion(lastModified: string): string {
  return lastModified;
}

/**
 * Normalizes one object record: id = key, version = LastModified, data = the metadata
 * (and the parsed body when configured).
 *
 * @returns `{ ok: false }` naming the key when the record lacks a key, an ETag or a valid
 *   LastModified, or when its body was to be stored but could not be read or parsed.
 */
export function normalizeObject(raw: unknown): Normalized {
  if (!isRecord(raw)) return { ok: false, reason: 'record is not an object', ref: null };
  const { key, etag, size } = raw;
  if (typeof key !== 'string' || key === '')
    return { ok: false, reason: 'field `key` is missing', ref: null };
  if (typeof etag !== 'string' || etag === '')
    return { ok: false, reason: 'field `etag` is missing', ref: key };
  const lastModified = toIsoTimestamp(raw.lastModified);
  if (lastModified === undefined) {
    return { ok: false, reason: 'field `lastModified` is not a valid timestamp', ref: key };
  }
  if (typeof raw.bodyError === 'string') return { ok: false, reason: raw.bodyError, ref: key };
  const data: Record<string, unknown> = {
    key,
    etag: bareEtag(etag),
    lastModified,
    size: typeof size === 'number' ? size : null,
    storageClass: typeof raw.storageClass === 'string' ? raw.storageClass : 'STANDARD',
  };
  if (typeof raw.contentType === 'string') data.contentType = raw.contentType;
  if (raw.body !== undefined) data.body = raw.body;
  if (typeof raw.bodySkipped === 'string') data.bodySkipped = raw.bodySkipped;
  return { ok: true, entity: { id: key, version: objectVersion(lastModified), data } };
}
