import { SourceHttpError } from '../retry/errors.js';

/**
 * "This entity no longer exists at the source", said in a way every caller understands whatever
 * the protocol: an HTTP source answers 404 or 410, an S3 bucket `NoSuchKey`, a database no row —
 * or the source answers a fetch by id with a record that lives elsewhere now (GitHub redirects a
 * transferred issue to the issue it became in another repository). A reconciliation confirms an
 * absence with `fetchItem` and tombstones only on this answer; a retry-failed run resolves the
 * entity's dead letter on it.
 */
export class EntityGoneError extends Error {
  override readonly name = 'EntityGoneError';
  constructor(
    /** The entity's id at the source. */
    readonly entityId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `error` says the entity is gone: an {@link EntityGoneError}, or HTTP 404 / 410. */
export function isGone(error: unknown): boolean {
  if (error instanceof EntityGoneError) return true;
  return error instanceof SourceHttpError && (error.status === 404 || error.status === 410);
}

/** How an entity is gone, for logs and run summaries: the connector's own words, or the HTTP status. */
export function goneReason(error: unknown): string {
  if (error instanceof EntityGoneError) return error.message;
  if (error instanceof SourceHttpError) return `the source answers ${error.status} for it`;
  return 'the source says it no longer exists';
}
