import { classifyDefault } from '../../retry/classify.js';
import { ClassifiedError, SourceResponseError, safeUrl } from '../../retry/errors.js';
import type { Connector, ConnectorContext, ConnectorManifest, FetchedPage } from '../contract.js';
import { withCredential } from '../credentials.js';
import { fetchJson, type JsonResponse } from '../http.js';
import { getPath } from '../values.js';
import { type RestJsonConfig, restJsonConfigSchema } from './config.js';
import { normalizeRecord } from './normalize.js';
import { nextCursor, pageOf, pageUrl, totalOf } from './pagination.js';

export type { RestJsonConfig } from './config.js';
export { restJsonConfigSchema } from './config.js';

/**
 * The `rest-json` connector: any JSON API whose list endpoint pages by cursor token, page number
 * or next-page URL, described by config (see {@link restJsonConfigSchema}). Errors follow the
 * default classification; the manifest follows the config (`ordered`, pagination type).
 */
const manifest: ConnectorManifest = {
  name: 'rest-json',
  entityType: 'record',
  orderedByModifiedTime: false,
  cursorComputableWithoutResponse: false,
};

/** The manifest for one config: ordered only when declared, cursors computable only for page numbers. */
function manifestFor(config: RestJsonConfig): ConnectorManifest {
  return {
    ...manifest,
    orderedByModifiedTime: config.ordered,
    cursorComputableWithoutResponse: config.pagination.type === 'page',
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
    }),
  );
}

const classify = (error: unknown, now = Date.now()) => classifyDefault(error, now);

async function fetchPage(
  config: RestJsonConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const url = pageUrl(config, cursor, ctx.since);
  const response = await getJson(config, url, ctx);
  const items = getPath(response.body, config.itemsPath);
  if (!Array.isArray(items)) {
    const where = config.itemsPath === '' ? 'the response body' : `\`${config.itemsPath}\``;
    throw new SourceResponseError(`${where} from ${safeUrl(url)} is not an array`, url);
  }
  return {
    items,
    nextCursor: nextCursor(config, cursor, { body: response.body, items, url: response.url }),
    total: totalOf(config, response.body),
  };
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
  fetchPage,
  fetchItem,
  normalize: normalizeRecord,
  classify,
  nextCursorWithoutResponse,
};
