import { z } from 'zod';

/**
 * Schemas shared by the routes. Request schemas are strict (unknown fields are refused);
 * response schemas describe what the API returns and feed the OpenAPI document.
 */

/** Source ids: lowercase, digits, `-` and `_`, 1–63 characters, starting with a letter or digit. */
export const SOURCE_ID_PATTERN = /^[a-z0-9][a-z0-9-_]{0,62}$/;

/** A source id path parameter or field. */
export const SourceIdSchema = z
  .string()
  .regex(SOURCE_ID_PATTERN, 'must be 1–63 lowercase letters, digits, - or _, starting with a letter or digit')
  .meta({ description: 'Source id, chosen by the administrator', example: 'acme-tickets' });

/** Run ids are ULIDs (they sort by creation time). */
export const RunIdSchema = z
  .string()
  .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a run id (a 26-character ULID)')
  .meta({ description: 'Run id (ULID)', example: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S' });

/** An ISO 8601 UTC timestamp in a response. */
export const IsoTimeSchema = z.iso.datetime().meta({ description: 'ISO 8601 UTC time' });

/** Most items one list page may return. */
export const MAX_PAGE_LIMIT = 100;

/** `?limit=&cursor=` of every listing. */
export const pageQueryShape = {
  limit: z.coerce
    .number()
    .int('must be a whole number')
    .min(1)
    .max(MAX_PAGE_LIMIT)
    .default(25)
    .meta({ description: `Items per page, 1–${MAX_PAGE_LIMIT}. Default 25.` }),
  cursor: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .meta({ description: 'The `nextCursor` of the previous page' }),
};

/** The query of a plain listing: `limit` and `cursor` only. */
export const PageQuerySchema = z.strictObject(pageQueryShape);

/** A page of a listing: `nextCursor` is null on the last page. */
export function pageSchema<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      items: z.array(item),
      nextCursor: z
        .string()
        .nullable()
        .meta({ description: 'Pass as `cursor` for the next page; null at the end' }),
    })
    .meta({ id });
}

/** Epoch milliseconds as ISO 8601, null stays null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
