import { classifyDefault } from '../../retry/classify.js';
import { ClassifiedError, SourceResponseError, safeUrl } from '../../retry/errors.js';
import type {
  Connector,
  ConnectorContext,
  ConnectorManifest,
  FetchedPage,
  WindowPlan,
  WindowRequest,
} from '../contract.js';
import { withCredential } from '../credentials.js';
import { fetchJson, type JsonResponse } from '../http.js';
import {
  advance,
  decodePosition,
  encodePosition,
  expiredFollow,
  type KeysetPosition,
  type KeysetStep,
  listedKey,
} from '../keyset.js';
import { checkRecordCount } from '../limits.js';
import { lookbackMs } from '../source-timing.js';
import { getPath } from '../values.js';
import { noWindows, planByCount, planByPosition, windowedRemaining } from '../windows.js';
import { limitsOf, type RestJsonConfig, restJsonConfigSchema } from './config.js';
import { normalizeRecord } from './normalize.js';
import { keyedNext, nextCursor, pageOf, pageUrl, totalOf } from './pagination.js';
import { fetchWindowedCursorPage, isWindowedCursor } from './windowed-cursor.js';

export type { RestJsonConfig } from './config.js';
export { restJsonConfigSchema } from './config.js';

/**
 * The `rest-json` connector: any JSON API whose list endpoint pages by cursor token, page number
 * or next-page URL, described by config (see {@link restJsonConfigSchema}). Errors follow the
 * default classification; the manifest follows the config (`ordered`, pagination type).
 *
 * Partitions (see {@link planWindows}) need an ordered stream with `sinceParam`, keyed or over a
 * stable source cursor (`./windowed-cursor.ts`): with keyed page pagination the windows come from
 * the record at each quantile position (a page of one record), counted by `totalPath` or by
 * probing for the end; with cursor or next-url pagination, from `totalPath` counts of `since`
 * listings, bisected over time. A cursor source without `totalPath`, and every unordered source
 * or one without `sinceParam`, is never split.
 */
const manifest: ConnectorManifest = {
  name: 'rest-json',
  entityType: 'record',
  orderedByModifiedTime: false,
  cursorComputableWithoutResponse: false,
};

/**
 * How the run keeps its position: `keyset` (its own `(updatedAt, id)` key, asked through
 * `sinceParam`; see `../keyset.ts`), `stable-cursor` (the source's token, declared a keyset
 * position itself), or `positional` (page numbers, URLs or tokens over a listing that shifts when
 * records change: nothing may be concluded from it about what was not listed).
 */
export function positionKind(config: RestJsonConfig): 'keyset' | 'stable-cursor' | 'positional' {
  if (!config.ordered) return 'positional';
  if (config.pagination.type === 'cursor' && config.pagination.stable) return 'stable-cursor';
  return config.sinceParam === undefined ? 'positional' : 'keyset';
}

/**
 * The manifest for one config: stable (watermark, resume, tombstones) only when keyed or over a
 * declared-stable cursor; cursors computable only for positional page numbers.
 */
function manifestFor(config: RestJsonConfig): ConnectorManifest {
  const kind = positionKind(config);
  const lookback = lookbackMs(config);
  return {
    ...manifest,
    orderedByModifiedTime: kind !== 'positional',
    cursorComputableWithoutResponse: config.pagination.type === 'page' && kind === 'positional',
    ...(lookback === undefined ? {} : { watermarkLookbackMs: lookback }),
    ...(config.sincePrecision === undefined ? {} : { sincePrecision: config.sincePrecision }),
  };
}

function requestHeaders(config: RestJsonConfig, secret: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'User-Agent': 'harvester-rest-json/0.1',
  };
  if (config.auth && secret !== undefined) headers[config.auth.header] = `${config.auth.prefix}${secret}`;
  return headers;
}

/** GETs `url` with the source's credential (refreshed once if the source rejects it). */
function getJson(config: RestJsonConfig, url: string, ctx: ConnectorContext): Promise<JsonResponse> {
  return withCredential(ctx, config.auth?.secretRef, classify, (secret) =>
    fetchJson(ctx.fetch, url, {
      headers: requestHeaders(config, secret),
      signal: ctx.signal,
      crossOriginRedirects: config.crossOriginRedirects ?? 'refuse',
      maxBodyBytes: limitsOf(config).bodyBytes,
    }),
  );
}

const classify = (error: unknown, now = Date.now()) => classifyDefault(error, now);

async function fetchPage(
  config: RestJsonConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const kind = positionKind(config);
  if (kind === 'keyset') return fetchKeyedPage(config, cursor, ctx);
  if (ctx.window !== undefined || isWindowedCursor(cursor)) {
    if (kind !== 'stable-cursor' || config.sinceParam === undefined) {
      throw new ClassifiedError(
        'permanent',
        'only an ordered rest-json stream with sinceParam (keyed, or over a stable cursor) reads a window',
      );
    }
    return fetchWindowedCursorPage(config, cursor, ctx.since, ctx.window, (url) =>
      fetchList(config, url, ctx),
    );
  }
  const { items, body, url } = await fetchList(config, pageUrl(config, cursor, ctx.since), ctx);
  return {
    items,
    nextCursor: nextCursor(config, cursor, { body, items, url }),
    total: totalOf(config, body),
  };
}

/** A page of a keyed stream: `sinceParam` from the position's key, the source's cursor only inside a tie. */
async function fetchKeyedPage(
  config: RestJsonConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const decoded = decodePosition(cursor, ctx.since, ctx.window);
  const listing = await listKeyed(config, decoded, ctx);
  if ('step' in listing) {
    const { step } = listing;
    return {
      items: [],
      nextCursor: step.next === null ? null : encodePosition(step.next),
      remaining: null,
      watermarkCeiling: step.ceiling,
    };
  }
  const { position, listed } = listing;
  const follow = position.follow ?? null;
  const precision = config.sincePrecision;
  const continuation = keyedNext(config, follow, listed, position.full ?? 0);
  const step = advance(
    position,
    listed.items.map((raw) => listedKey(normalizeRecord(config, raw), raw)),
    continuation.next,
    { guessed: continuation.guessed, precision, bound: config.sinceBound },
  );
  const items = listed.items.filter((_, index) => step.deliver[index]);
  const total = follow === null ? totalOf(config, listed.body) : null;
  return {
    items,
    nextCursor: step.next === null ? null : encodePosition(step.next),
    // A `since` listing's total counts from the key on, the records skipped at the key included.
    remaining: windowedRemaining(position, step, items.length, () =>
      total === null ? null : Math.max(0, total - (listed.items.length - items.length)),
    ),
    watermarkCeiling: step.ceiling,
  };
}

/**
 * The page at a keyed position. A source token that expired inside a stretch read by position
 * (cursor and next-url pagination; page numbers do not expire) is replaced by listing the stretch
 * again from the run's own key (`../keyset-expiry.ts`).
 */
async function listKeyed(
  config: RestJsonConfig,
  position: KeysetPosition,
  ctx: ConnectorContext,
): Promise<{ position: KeysetPosition; listed: Listed } | { step: KeysetStep }> {
  try {
    return {
      position,
      listed: await fetchList(config, pageUrl(config, position.follow ?? null, position.at), ctx),
    };
  } catch (error) {
    const expiry = config.pagination.type === 'page' ? null : expiredFollow(position, error);
    if (expiry === null) throw error;
    if ('step' in expiry) return expiry;
    const restarted = expiry.restart;
    return { position: restarted, listed: await fetchList(config, pageUrl(config, null, restarted.at), ctx) };
  }
}

/**
 * Windows of similar size for a keyed stream or one over a stable cursor with `sinceParam`
 * (module documentation); any other stream, or a cursor stream without `totalPath`, is not split
 * (no boundaries, no request spent).
 */
async function planWindows(
  config: RestJsonConfig,
  request: WindowRequest,
  ctx: ConnectorContext,
): Promise<WindowPlan> {
  const kind = positionKind(config);
  if (kind === 'positional' || config.sinceParam === undefined) return noWindows(null, 0);
  const one = { ...config, pageSize: 1 };
  const { pagination } = config;
  if (kind === 'keyset' && pagination.type === 'page') {
    return planByPosition(
      async (index) => {
        const listed = await fetchList(
          config,
          pageUrl(one, String(pagination.firstPage + index), ctx.since),
          ctx,
        );
        const first = listed.items[0];
        return {
          key: first === undefined ? null : listedKey(normalizeRecord(config, first)),
          total: totalOf(config, listed.body),
        };
      },
      request,
      { precision: config.sincePrecision },
    );
  }
  if (config.totalPath === undefined) return noWindows(null, 0);
  return planByCount(
    async (since) => {
      const listed = await fetchList(config, pageUrl(one, null, since), ctx);
      const first = listed.items[0];
      return {
        total: totalOf(config, listed.body),
        first: first === undefined ? null : listedKey(normalizeRecord(config, first)),
      };
    },
    ctx.since,
    request,
    { now: Date.now(), precision: config.sincePrecision },
  );
}

/** One listed page: the raw records, the body and the answered URL. */
type Listed = { items: unknown[]; body: unknown; url: string };

async function fetchList(config: RestJsonConfig, url: string, ctx: ConnectorContext): Promise<Listed> {
  const response = await getJson(config, url, ctx);
  const items = getPath(response.body, config.itemsPath);
  if (!Array.isArray(items)) {
    const where = config.itemsPath === '' ? 'the response body' : `\`${config.itemsPath}\``;
    throw new SourceResponseError(`${where} from ${safeUrl(url)} is not an array`, url);
  }
  checkRecordCount(items.length, limitsOf(config), url);
  return { items, body: response.body, url: response.url };
}

async function fetchItem(config: RestJsonConfig, id: string, ctx: ConnectorContext): Promise<unknown> {
  if (config.itemUrl === undefined) {
    throw new ClassifiedError(
      'permanent',
      'retry by id is unavailable: this rest-json source has no `itemUrl` configured',
    );
  }
  const url = new URL(config.itemUrl.replaceAll('{id}', encodeURIComponent(id)));
  for (const [name, value] of Object.entries(config.extraQuery)) url.searchParams.set(name, value);
  const response = await getJson(config, url.href, ctx);
  const item = getPath(response.body, config.itemPath);
  if (item === undefined) {
    throw new SourceResponseError(`no record at \`${config.itemPath}\` in ${safeUrl(url.href)}`, url.href);
  }
  return item;
}

/**
 * The next page number without the response (page pagination only), so a run can skip a page
 * that failed for good and continue.
 *
 * @throws ClassifiedError (permanent) for cursor and next-url pagination, whose next cursor only
 *   the response knows; the engine checks the manifest first, so reaching this is a bug.
 */
function nextCursorWithoutResponse(config: RestJsonConfig, cursor: string | null): string | null {
  if (config.pagination.type !== 'page') {
    throw new ClassifiedError(
      'permanent',
      `the next cursor of ${config.pagination.type} pagination cannot be computed without a response`,
    );
  }
  return String(pageOf(config.pagination, cursor) + 1);
}

/** The `rest-json` connector (see the module documentation and {@link restJsonConfigSchema}). */
export const restJsonConnector: Connector<RestJsonConfig> = {
  manifest,
  configSchema: restJsonConfigSchema,
  manifestFor,
  streamIdentity: (config) => ({
    url: config.url,
    extraQuery: config.extraQuery,
    itemsPath: config.itemsPath,
    idField: config.idField,
    updatedAtField: config.updatedAtField,
  }),
  secretCarriers: (config) =>
    config.auth ? [{ reference: config.auth.secretRef, header: config.auth.header }] : [],
  credential: (config) => ({
    origin: new URL(config.url).origin,
    secretRef: config.auth?.secretRef ?? null,
    configured: config.rateLimit && {
      limit: config.rateLimit.requests,
      windowSeconds: config.rateLimit.perSeconds,
    },
  }),
  fetchPage,
  fetchItem,
  normalize: normalizeRecord,
  classify,
  nextCursorWithoutResponse,
  planWindows,
};
