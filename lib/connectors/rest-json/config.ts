import { z } from 'zod';
import { resolveLimits, type SourceLimits, sourceLimitsSchema } from '../limits.js';
import { sinceBound, sincePrecision, watermarkLookbackSeconds } from '../source-timing.js';

/**
 * Config of the `rest-json` connector: any JSON API, configured rather than coded. Paths are dot
 * paths into the response (`data.items`, `meta.next`; `''` is the body itself).
 */

const dotPath = z.string().regex(/^$|^[^.]+(\.[^.]+)*$/, 'must be a dot path such as `data.items`');
const requiredPath = z.string().regex(/^[^.]+(\.[^.]+)*$/, 'must be a dot path such as `data.id`');
const param = z.string().min(1, 'must not be empty');
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** How the source pages its list; the cursor the engine stores depends on it. */
export const paginationSchema = z.discriminatedUnion('type', [
  /** An opaque token in each response (`nextCursorPath`), sent back as `cursorParam`. Cursor: the token. */
  z.strictObject({
    type: z
      .literal('cursor')
      .meta({ description: '`cursor`: the response carries an opaque token for the next page.' }),
    cursorParam: param.meta({
      description: 'Query parameter the token is sent back as (`cursor`, `page_token`).',
    }),
    nextCursorPath: requiredPath.meta({
      description:
        "Dot path of the next page's token in a list response (`meta.next_cursor`); absent or empty ends the stream.",
    }),
    stable: z.boolean().default(false).meta({
      description:
        "True when the token is itself a keyset position the source keeps valid while records change (it encodes the last record's modification time and id, not an offset). Default false: the run then keeps its own key and asks `sinceParam` from it, following the token only inside a tie group larger than a page.",
    }),
  }),
  /** Numbered pages; an empty page ends the stream. Cursor: the page number as a string. */
  z.strictObject({
    type: z.literal('page').meta({ description: '`page`: numbered pages.' }),
    pageParam: param
      .default('page')
      .meta({ description: 'Query parameter carrying the page number. Default `page`.' }),
    firstPage: z
      .number()
      .int('must be a whole number')
      .min(0)
      .default(1)
      .meta({ description: 'Number of the first page (0 or 1, as the API counts). Default 1.' }),
  }),
  /** The response names the next page's URL (`nextUrlPath`). Cursor: that URL. */
  z.strictObject({
    type: z.literal('next-url').meta({ description: "`next-url`: the response names the next page's URL." }),
    nextUrlPath: requiredPath.meta({
      description:
        "Dot path of the next page's URL in a list response (`links.next`); absent or empty ends the stream.",
    }),
  }),
]);

/** An HTTP header name (RFC 9110 token: no spaces, CR or LF). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the transport owns: setting them would re-address the request (`Host`) or break its
 * framing, never authenticate it.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'expect',
]);

/** Credentials from a secret reference, sent as `header: prefix + secret`. */
export const authSchema = z.strictObject({
  header: z
    .string()
    .min(1)
    .max(128)
    .regex(HEADER_NAME, "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")
    .refine(
      (name) => !RESERVED_HEADERS.has(name.toLowerCase()),
      'must not be a transport header such as Host',
    )
    .default('Authorization')
    .meta({
      description:
        "Default `Authorization`. Any header name but the transport's own (`Host`, `Content-Length`, …).",
    }),
  prefix: z
    .string()
    .max(32)
    .refine((prefix) => !/[\r\n\0]/.test(prefix), 'must not contain CR, LF or NUL')
    .default('Bearer ')
    .meta({ description: "Default `Bearer ` (note the space); `''` for APIs that take the bare key." }),
  secretRef: z.string().min(1, 'must not be empty').meta({
    description: 'An SSM parameter or Secrets Manager name; the secret itself never enters the config.',
  }),
});

/** The `rest-json` config schema. */
export const restJsonConfigSchema = z
  .strictObject({
    url: httpUrl.meta({ description: 'The list endpoint. May carry fixed query parameters of its own.' }),
    itemsPath: dotPath.default('').meta({
      description: "Where the array of records is in a list response. Default `''`: the body is the array.",
    }),
    idField: requiredPath.meta({ description: "Dot path of each record's id (string or number)." }),
    updatedAtField: requiredPath.meta({
      description: "Dot path of each record's modification time (ISO 8601, or epoch seconds / ms).",
    }),
    pageSize: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(10_000)
      .default(100)
      .meta({ description: 'Records requested per page. Default 100.' }),
    pageSizeParam: param
      .default('limit')
      .meta({ description: 'Query parameter carrying the page size. Default `limit`.' }),
    sinceParam: param.optional().meta({
      description:
        "Query parameter filtering records modified at or after a time (`?updated_since=…`, inclusive). With `ordered`, it makes the stream keyed: every page asks from the last delivered record's time, so records edited during a run are never skipped, and incremental runs read only what changed. Without it (and without a `stable` cursor) the stream cannot be keyed: incremental runs read everything and never move a watermark.",
    }),
    pagination: paginationSchema.meta({
      description:
        'How the API pages its list: `cursor` (a token), `page` (numbered pages) or `next-url` (a URL in the body).',
    }),
    totalPath: requiredPath.optional().meta({
      description: 'Dot path of the total record count in a list response, when the API reports one.',
    }),
    itemUrl: httpUrl
      .refine((url) => url.includes('{id}'), 'must contain `{id}`')
      .optional()
      .meta({
        description:
          'Single-record URL with `{id}` (`https://api.example.com/records/{id}`), for retry by id.',
      }),
    itemPath: dotPath.default('').meta({
      description: "Where the record is in a single-record response. Default `''`: the body is the record.",
    }),
    auth: authSchema.optional().meta({
      description:
        'Credentials from a secret reference, sent as a header (`Authorization: Bearer …` by default). Default none.',
    }),
    ordered: z.boolean().default(false).meta({
      description:
        'Whether the list is globally ordered by modification time (oldest first). Default false: only declare it when the API guarantees it, since an incremental run then resumes from its checkpoint.',
    }),
    crossOriginRedirects: z.enum(['refuse', 'follow-without-credentials']).optional().meta({
      description:
        'A redirect to another origin: `refuse` (the default when absent: the page fails as a permanent error) or `follow-without-credentials` (followed with `Accept` and `User-Agent` only, never the auth header). Same-origin redirects are always followed with credentials.',
    }),
    rateLimit: z
      .strictObject({
        requests: z
          .number()
          .int('must be a whole number')
          .min(1)
          .meta({ description: 'Requests allowed in each window.' }),
        perSeconds: z
          .number()
          .int('must be a whole number')
          .min(1)
          .max(86_400)
          .meta({ description: 'Length of the window in seconds, 1–86,400.' }),
      })
      .optional()
      .meta({
        description:
          "The API's rate limit, for APIs that do not announce it in `X-RateLimit-*` / `RateLimit-*` headers: at most `requests` per `perSeconds` (a fixed window), shared by every source with the same origin and secret. Headers, when the API sends them, take precedence. Default none.",
      }),
    extraQuery: z.record(z.string(), z.string()).default({}).meta({
      description: 'Fixed query parameters added to every request (`{ "format": "json" }`). Default none.',
    }),
    watermarkLookbackSeconds: watermarkLookbackSeconds.meta({
      description:
        "Seconds before the watermark an incremental run asks from; default the stack's (5), at most 86,400.",
    }),
    sincePrecision: sincePrecision.meta({
      description:
        '`s` when `sinceParam` reads whole seconds (drops or refuses milliseconds): windows are then cut at whole seconds and pages ask `since` in whole seconds. Default `ms`.',
    }),
    sinceBound: sinceBound.meta({
      description:
        "`exclusive` when `sinceParam` lists only records modified strictly after the time given (Stripe's `created[gt]`): every request then asks one precision unit earlier and skips what that lists before the time meant. Default `inclusive`.",
    }),
    limits: sourceLimitsSchema.optional().meta({
      description:
        'What the source may send (see docs/limits.md): body bytes, records a page, cursor and next-URL length.',
    }),
  })
  .meta({
    examples: [
      {
        url: 'https://api.example.com/v1/tickets',
        itemsPath: 'data',
        idField: 'id',
        updatedAtField: 'updated_at',
        pageSize: 100,
        sinceParam: 'updated_since',
        ordered: true,
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'meta.next_cursor' },
        totalPath: 'meta.total',
        itemUrl: 'https://api.example.com/v1/tickets/{id}',
        auth: { secretRef: 'ssm:/harvester/tickets/api-key' },
      },
    ],
  });

/** The parsed config, defaults applied. */
export type RestJsonConfig = z.output<typeof restJsonConfigSchema>;
/** The limits in force for a source (records a page: 4 × `pageSize` unless configured). */
export function limitsOf(config: RestJsonConfig): SourceLimits {
  return resolveLimits(config.limits, config.pageSize);
}
/** The parsed pagination settings. */
export type RestJsonPagination = RestJsonConfig['pagination'];
