import { ClassifiedError } from '../../retry/errors.js';

/**
 * A run's position in a bucket listing: the last key delivered (`StartAfter` of the next
 * ListObjectsV2 request) and the time the listing began. S3 lists keys in UTF-8 binary order, and
 * a key never moves, so "every key after `after`" is the same set of keys whether the run reads
 * on now or resumes an hour later: the resume is exact. The start time travels with the position
 * because the run's watermark is derived from it, also after a resume.
 */
export interface S3Position {
  /** The last key delivered; null: the start of the listing. */
  readonly after: string | null;
  /** When the listing began (ISO 8601, Harvester's clock). */
  readonly startedAt: string;
}

const PREFIX = 's3k1.';

/** Encodes a position as the cursor the engine checkpoints (opaque to it). */
export function encodeS3Position(position: S3Position): string {
  return PREFIX + Buffer.from(JSON.stringify(position)).toString('base64url');
}

/**
 * The position a cursor encodes; a null cursor starts a listing now.
 *
 * @throws ClassifiedError (permanent) when the cursor is not an S3 position: a checkpoint written
 *   under another connector or a corrupt one, which must not be guessed at.
 */
export function decodeS3Position(cursor: string | null, now: number): S3Position {
  if (cursor === null) return { after: null, startedAt: new Date(now).toISOString() };
  if (cursor.startsWith(PREFIX)) {
    try {
      const parsed: unknown = JSON.parse(
        Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'),
      );
      if (isPosition(parsed)) return parsed;
    } catch {
      // falls through to the refusal below
    }
  }
  throw new ClassifiedError('permanent', `cursor \`${cursor.slice(0, 40)}\` is not an S3 listing position`);
}

function isPosition(value: unknown): value is S3Position {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    (p.after === null || typeof p.after === 'string') &&
    typeof p.startedAt === 'string' &&
    !Number.isNaN(Date.parse(p.startedAt))
  );
}

/**
 * The watermark a listing that began at `startedAt` justifies: every object modified before it
 * existed when the listing began, so the listing served it (or it was deleted). Moved back by the
 * clock-skew margin, and down to the whole second, because S3 reports modification times to the
 * second: an object written just after the start may carry the start's second.
 */
export function listingWatermark(startedAt: string, marginSeconds: number): string {
  const ms = Date.parse(startedAt) - marginSeconds * 1_000;
  return new Date(Math.floor(ms / 1_000) * 1_000).toISOString();
}
