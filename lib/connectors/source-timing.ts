import { z } from 'zod';

/**
 * Per-source settings about a source's clock, shared by the connectors whose streams are keyed by
 * modification time. See `docs/sources.md` for what each one is for.
 */

/** The most a source's watermark lookback may be: a day of re-reading on every incremental run. */
export const LOOKBACK_CEILING_SECONDS = 86_400;

/**
 * How far before its watermark an incremental run of this source asks (`since` = watermark − it).
 * Absent: the stack's `WATERMARK_LOOKBACK_SECONDS` (5 s). A source whose writes become visible
 * long after their timestamp (a long transaction commits rows stamped when it began; a replica
 * lags) needs at least that long, or rows stamped before the watermark appear after it was set.
 */
export const watermarkLookbackSeconds = z
  .number()
  .int('must be a whole number')
  .min(0)
  .max(LOOKBACK_CEILING_SECONDS, `must be at most ${LOOKBACK_CEILING_SECONDS} (a day)`)
  .optional();

/** The finest time a source's `since` filter tells apart. */
export type SincePrecision = 'ms' | 's';

/**
 * `'s'` for a `since` filter that reads whole seconds (drops or rejects milliseconds), as GitLab's
 * `updated_after`, GitHub's `since` and many REST APIs do. Absent: `'ms'`.
 */
export const sincePrecision = z.enum(['ms', 's']).optional();

/** Whether a source's `since` filter lists records modified at exactly the time given. */
export type SinceBound = 'inclusive' | 'exclusive';

/**
 * `'exclusive'` for a `since` filter that lists only records modified strictly after the time
 * given, as Stripe's `created[gt]` and Zendesk's incremental `start_time` do. Absent: `'inclusive'`.
 */
export const sinceBound = z.enum(['inclusive', 'exclusive']).optional();

/**
 * The time to send as `since` for the records modified at or after `iso`: cut to `precision`,
 * and for an exclusive filter one unit of it (a millisecond, or a second) earlier. The listing
 * may then hold records before `iso`, which a keyed run skips as before its key.
 *
 * @example sinceFor('2026-03-01T00:00:01.500Z', 's', 'exclusive') // '2026-03-01T00:00:00.000Z'
 */
export function sinceFor(
  iso: string,
  precision: SincePrecision | undefined,
  bound: SinceBound | undefined,
): string {
  const cut = atPrecision(iso, precision);
  if (bound !== 'exclusive') return cut;
  const ms = Date.parse(cut);
  if (Number.isNaN(ms)) return cut;
  return new Date(ms - (precision === 's' ? 1_000 : 1)).toISOString();
}

/** `iso` cut down to `precision` (whole seconds: the milliseconds dropped). Not an ISO time: as it is. */
export function atPrecision(iso: string, precision: SincePrecision | undefined): string {
  if (precision !== 's') return iso;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return new Date(Math.floor(ms / 1_000) * 1_000).toISOString();
}

/** The lookback of a source in ms, when its config sets one; undefined: the stack's. */
export function lookbackMs(config: {
  readonly watermarkLookbackSeconds?: number | undefined;
}): number | undefined {
  return config.watermarkLookbackSeconds === undefined ? undefined : config.watermarkLookbackSeconds * 1_000;
}
