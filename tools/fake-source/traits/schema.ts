import { z } from 'zod';

/**
 * The source zoo: switchable behaviours of real APIs that a harvester must survive, each off by
 * default. `startFakeSource({ traits })` or `{"action":"set-traits"}` turns them on; each field
 * names the API it is taken from. A property test draws sources from them (`test/zoo/`).
 */
export const traitsSchema = z.strictObject({
  /**
   * Rows filtered after the limit: this fraction of entities (chosen by the seed) is invisible to
   * the caller. The page is cut to `limit` first and the invisible rows are dropped afterwards, so
   * a page comes back short (even empty) while the source still says more follows — Stripe's
   * list endpoints, Slack's `conversations.list` and Jira's search do this with rows the caller
   * may not see. The invisible entities answer 404 when fetched by id (as GitHub and Jira answer
   * for what the caller may not see). Default 0.
   */
  postLimitFilter: z.number().min(0).max(0.9).default(0),
  /**
   * A page cap that changes during a run: at most `first` rows a page for the first `after`
   * listing requests, then at most `later`, whatever the client asked for. GitHub caps `per_page`
   * at 100 without saying so; search services lower their page size under load. Default none.
   */
  pageCap: z
    .strictObject({
      first: z.number().int().min(1),
      after: z.number().int().min(0),
      later: z.number().int().min(1),
    })
    .nullable()
    .default(null),
  /**
   * rest-json ids are 36-character UUIDs (version 7: time-ordered, so listing order by id is
   * creation order, as in databases that key rows by UUIDv7) instead of `e-000001`. Long ids make a
   * keyset position that lists the ids of a tie group long. Default false.
   */
  longIds: z.boolean().default(false),
  /**
   * How the `since` filter (`since`, GitHub's `since`, GitLab's `updated_after`) reads a time.
   * `precision: 's'` drops the milliseconds of the time given, as APIs storing whole seconds do
   * (GitHub's times have no milliseconds). `bound: 'exclusive'` lists only rows modified strictly
   * after it, as Stripe's `created[gt]` and Zendesk's incremental `start_time` cursors do. Default
   * milliseconds, inclusive (GitLab documents `updated_after` as "on or after").
   */
  since: z
    .strictObject({
      precision: z.enum(['ms', 's']).default('ms'),
      bound: z.enum(['inclusive', 'exclusive']).default('inclusive'),
    })
    .default({ precision: 'ms', bound: 'inclusive' }),
  /**
   * This many entities (chosen by the seed) carry a field JSON parsers mishandle, in turns: an
   * integer above 2^53 (64-bit ids, Twitter's and Discord's snowflakes), `1e400` (a decimal no
   * double holds), and an object nested 40 deep (past DynamoDB's 32 levels). rest-json shape only:
   * the other shapes keep only the fields their connector reads. Default 0.
   */
  hostileBodies: z.number().int().min(0).default(0),
  /**
   * This many further entities carry field names that are names of JavaScript properties, or no
   * UTF-8 form, in turns: `constructor`, `__proto__`, `prototype`, `toString` and `hasOwnProperty`
   * keys nested in a field (a car's `constructor` in Formula 1 data, Ergast's API; any
   * user-defined key map: Stripe's `metadata`, Jira's custom fields), a field name holding a lone
   * UTF-16 surrogate (a `\ud800` escape that a truncating server cut from its pair, as Twitter's
   * API has sent in text), and an id holding one. rest-json shape only. Default 0.
   */
  hostileKeys: z.number().int().min(0).default(0),
  /**
   * How the rest-json shape's 429 announces when to come back: `retry-after` (delta seconds, RFC
   * 9110), `retry-after-date` (an HTTP date, as Azure and some CDNs send it), `x-rate-limit-reset`
   * alone (epoch seconds: Okta's and X/Twitter's only hint), or `ratelimit-reset` (delta seconds,
   * the IETF RateLimit header draft). Default `retry-after`.
   */
  rateLimitReset: z
    .enum(['retry-after', 'retry-after-date', 'x-rate-limit-reset', 'ratelimit-reset'])
    .default('retry-after'),
  /** Answers are gzip-compressed when the request accepts it, as GitHub's and most APIs' are. Default false. */
  gzip: z.boolean().default(false),
  /**
   * The `/records` cursor grows by this many bytes a page: cursors that carry state, as Azure
   * Cosmos DB continuation tokens do (documented to reach several KB, hence its
   * `responseContinuationTokenLimitInKb`) and Elasticsearch scroll ids grow with the shards read.
   * Default 0.
   */
  cursorGrowth: z.number().int().min(0).max(65_536).default(0),
  /**
   * Bytes of JSON whitespace after every source answer: the same body, only larger. With `gzip`,
   * a decompression bomb (see `oversize.ts`). Default 0.
   */
  padBytes: z
    .number()
    .int()
    .min(0)
    .max(512 * 1_024 * 1_024)
    .default(0),
  /** Answers go out chunked, without `Content-Length`, as streaming proxies send them. Default false. */
  hideLength: z.boolean().default(false),
  /**
   * The rest-json listings ignore `limit` and answer this many rows: an API that does not read the
   * page-size parameter it was sent answers with its own default, or the whole collection. Default none.
   */
  ignoreLimit: z.number().int().min(1).max(10_000_000).nullable().default(null),
  /**
   * The rest-json listings' `total` is off by this many from the rows they serve: Jira's search
   * `total` counts issues the caller may not see, Elasticsearch's `hits.total` is only a lower
   * bound past 10,000 hits unless asked to track them all. Default 0.
   */
  countSkew: z.number().int().min(-1_000).max(1_000).default(0),
  /**
   * Entities (by number: 7 is `e-000007`) whose first listing page comes back with no rows, once
   * each, while the continuation still says more follows: a search that timed out on the shard
   * holding them answers a partial page, often an empty one (GitHub search's
   * `incomplete_results: true`, Elasticsearch's `timed_out: true` with the hits it gathered), and
   * a read replica behind its primary lists nothing yet. Default none.
   */
  blankOnce: z.array(z.number().int().min(1)).max(1_000).default([]),
  /**
   * Listing requests (counted from the traits' setting, 1 is the first) after which every
   * `/records` cursor issued so far expires: later requests carrying one are answered 410 with
   * `{"error": "cursor expired"}`. Continuations that do not last: Elasticsearch's scroll ids
   * past their keep-alive (404 `search_context_missing_exception`), Salesforce's query locators
   * after 15 idle minutes (400 `INVALID_QUERY_LOCATOR`), Google's page tokens, a continuation
   * cache's eviction. Default none.
   */
  expireCursorsAfter: z.array(z.number().int().min(1)).max(1_000).default([]),
});

/** Traits as given (`startFakeSource({ traits })`, `{"action":"set-traits"}`). */
export type TraitOptions = z.input<typeof traitsSchema>;
/** Traits with defaults applied. */
export type Traits = z.output<typeof traitsSchema>;

/** A source with no trait on: the fake source as it always was. */
export const NO_TRAITS: Traits = traitsSchema.parse({});

/** The kinds of {@link Traits.hostileBodies}, in the order entities get them. */
export const HOSTILE_KINDS = ['big-integer', 'overflow', 'deep'] as const;
/** The kinds of {@link Traits.hostileKeys}, in the order entities get them. */
export const HOSTILE_KEY_KINDS = ['property-names', 'surrogate-name', 'surrogate-id'] as const;
/** One of {@link HOSTILE_KINDS} or {@link HOSTILE_KEY_KINDS}. */
export type HostileKind = (typeof HOSTILE_KINDS)[number] | (typeof HOSTILE_KEY_KINDS)[number];
