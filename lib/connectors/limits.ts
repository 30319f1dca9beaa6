import { z } from 'zod';
import { ClassifiedError, safeUrl } from '../retry/errors.js';

/**
 * Ceilings on what a source may send: decompressed body bytes, records per page, and the length of
 * the cursors and next-page URLs it hands back (they are stored in checkpoints, travel on page
 * messages and are shown by the API). Each has a default and a hard ceiling; a source may set its
 * own value up to the ceiling (`limits` in its connector config). Going over one is a permanent
 * error: the same answer would go over it again, so the page is dead-lettered with a reason that
 * names the limit and how to raise it. See `docs/limits.md`.
 */
export const SOURCE_LIMITS = {
  /**
   * Decompressed bytes of one response. 16 MiB holds a page of 100 GitHub issues with maximal
   * bodies (65,536 characters each) twice over; the 32 MiB ceiling keeps the parsed page (several
   * times its text) well inside the page worker's 512 MB.
   */
  bodyBytes: { default: 16 * 1_024 * 1_024, ceiling: 32 * 1_024 * 1_024 },
  /**
   * Records in one page: by default four times the page size asked for (servers may answer more
   * than asked, rarely more than that), never more than 10,000 (each is a conditional write in
   * the same delivery).
   */
  recordsPerPage: { factor: 4, ceiling: 10_000 },
  /** Characters of a source's cursor token; it is sent back in a URL, and 8 KB is what servers accept there (nginx's default). */
  cursorChars: { default: 2_048, ceiling: 8_192 },
  /** Characters of a next-page URL; browsers and proxies commonly stop at 8 KB. */
  nextUrlChars: { default: 4_096, ceiling: 8_192 },
} as const;

const count = (min: number, max: number) =>
  z.number().int('must be a whole number').min(min).max(max, `must be at most ${max}`);

/** The `limits` field of a connector config: every value optional, within its ceiling. */
export const sourceLimitsSchema = z.strictObject({
  maxBodyBytes: count(1_024, SOURCE_LIMITS.bodyBytes.ceiling)
    .optional()
    .meta({ description: 'Decompressed bytes of one response. Default 16 MiB, at most 32 MiB.' }),
  maxRecordsPerPage: count(1, SOURCE_LIMITS.recordsPerPage.ceiling)
    .optional()
    .meta({ description: 'Records in one page. Default 4 × the page size, at most 10,000.' }),
  maxCursorLength: count(16, SOURCE_LIMITS.cursorChars.ceiling)
    .optional()
    .meta({ description: 'Characters of a cursor token the source returns. Default 2,048, at most 8,192.' }),
  maxNextUrlLength: count(64, SOURCE_LIMITS.nextUrlChars.ceiling)
    .optional()
    .meta({ description: 'Characters of a next-page URL the source returns. Default 4,096, at most 8,192.' }),
});

/** A source's `limits` as configured (every field optional). */
export type SourceLimitsConfig = z.output<typeof sourceLimitsSchema>;

/** The limits in force for one source. */
export interface SourceLimits {
  readonly bodyBytes: number;
  readonly recordsPerPage: number;
  readonly cursorChars: number;
  readonly nextUrlChars: number;
}

/** The limits in force: the configured values, else the defaults (records from `pageSize`). */
export function resolveLimits(configured: SourceLimitsConfig | undefined, pageSize: number): SourceLimits {
  const { recordsPerPage } = SOURCE_LIMITS;
  return {
    bodyBytes: configured?.maxBodyBytes ?? SOURCE_LIMITS.bodyBytes.default,
    recordsPerPage:
      configured?.maxRecordsPerPage ?? Math.min(recordsPerPage.factor * pageSize, recordsPerPage.ceiling),
    cursorChars: configured?.maxCursorLength ?? SOURCE_LIMITS.cursorChars.default,
    nextUrlChars: configured?.maxNextUrlLength ?? SOURCE_LIMITS.nextUrlChars.default,
  };
}

/** Which limit a source went over, named as its config field. */
export type LimitField = keyof SourceLimitsConfig;

/** A source sent more than its limits allow: permanent, since the same answer would again. */
export class SourceLimitError extends ClassifiedError {
  constructor(
    readonly limit: LimitField,
    message: string,
  ) {
    super('permanent', message);
  }
}

/** The sentence every limit error ends with: where the value comes from and how far it may go. */
export function raiseHint(field: LimitField, ceiling: number): string {
  return `raise \`limits.${field}\` in the source's config (at most ${ceiling}) if the source is right`;
}

/** Refuses a page holding more records than the source's limit. */
export function checkRecordCount(records: number, limits: SourceLimits, url: string): void {
  if (records <= limits.recordsPerPage) return;
  throw new SourceLimitError(
    'maxRecordsPerPage',
    `the page from ${safeUrl(url)} holds ${records} records, more than this source's limit of ` +
      `${limits.recordsPerPage} a page (check that the page-size parameter is one the API reads, or ` +
      `${raiseHint('maxRecordsPerPage', SOURCE_LIMITS.recordsPerPage.ceiling)})`,
  );
}

/** `cursor` when it is within the source's cursor limit; a permanent error otherwise. */
export function checkCursor(cursor: string, limits: SourceLimits, url: string): string {
  if (cursor.length <= limits.cursorChars) return cursor;
  throw new SourceLimitError(
    'maxCursorLength',
    `the next-page cursor from ${safeUrl(url)} is ${cursor.length} characters, more than this source's ` +
      `limit of ${limits.cursorChars} (${raiseHint('maxCursorLength', SOURCE_LIMITS.cursorChars.ceiling)})`,
  );
}

/** `next` (a next-page URL) when it is within the source's URL limit; a permanent error otherwise. */
export function checkNextUrl(next: string, limits: SourceLimits, url: string): string {
  if (next.length <= limits.nextUrlChars) return next;
  throw new SourceLimitError(
    'maxNextUrlLength',
    `the next-page URL from ${safeUrl(url)} is ${next.length} characters, more than this source's ` +
      `limit of ${limits.nextUrlChars} (${raiseHint('maxNextUrlLength', SOURCE_LIMITS.nextUrlChars.ceiling)})`,
  );
}
