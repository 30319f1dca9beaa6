import { NumberValue } from '../../json/lossless.js';
import { ClassifiedError, SourceResponseError, safeUrl } from '../../retry/errors.js';
import { sameOriginUrl } from '../http.js';
import { checkCursor, checkNextUrl } from '../limits.js';
import { sinceFor } from '../source-timing.js';
import { getPath } from '../values.js';
import { limitsOf, type RestJsonConfig, type RestJsonPagination } from './config.js';

/** The settings of page-number pagination. */
export type PagePagination = Extract<RestJsonPagination, { type: 'page' }>;

/**
 * The three pagination styles of `rest-json`: which URL a cursor means, and which cursor comes
 * next. Cursor formats: the source's token (`cursor`), the page number as a string (`page`), the
 * next page's URL (`next-url`).
 */

function withQuery(url: string, params: Record<string, string | undefined>): string {
  const built = new URL(url);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) built.searchParams.set(name, value);
  }
  return built.href;
}

/** The page number a `page` cursor names; a cursor that is not one is a corrupt checkpoint. */
export function pageOf(pagination: PagePagination, cursor: string | null): number {
  if (cursor === null) return pagination.firstPage;
  if (!/^\d+$/.test(cursor)) {
    throw new ClassifiedError('permanent', `page cursor \`${cursor.slice(0, 40)}\` is not a page number`);
  }
  return Number(cursor);
}

/**
 * The URL of the page at `cursor`. Built URLs carry the page size, `extraQuery`, the `since`
 * filter and the position; a `next-url` cursor is followed as the source gave it (it already
 * carries the query), after checking it stays on the configured origin.
 */
export function pageUrl(config: RestJsonConfig, cursor: string | null, since: string | null): string {
  const { pagination } = config;
  if (pagination.type === 'next-url' && cursor !== null) return sameOriginUrl(cursor, config.url);
  const position =
    pagination.type === 'cursor'
      ? { [pagination.cursorParam]: cursor ?? undefined }
      : pagination.type === 'page'
        ? { [pagination.pageParam]: String(pageOf(pagination, cursor)) }
        : {};
  // Every request asks what the run means, whatever the source's filter reads (`sinceFor`).
  const filter =
    config.sinceParam && since
      ? { [config.sinceParam]: sinceFor(since, config.sincePrecision, config.sinceBound) }
      : {};
  return withQuery(config.url, {
    ...config.extraQuery,
    [config.pageSizeParam]: String(config.pageSize),
    ...filter,
    ...position,
  });
}

/** A token or URL read from the response: absent, null, `''` and `false` all mean "no next page". */
function readNext(body: unknown, path: string, url: string): string | null {
  const value = getPath(body, path);
  if (value === undefined || value === null || value === '' || value === false) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (value instanceof NumberValue) return value.value;
  throw new SourceResponseError(`\`${path}\` in the response from ${safeUrl(url)} is not a string`, url);
}

/**
 * A source that hands back the cursor it was just given would be read forever; ending the stream
 * instead could silently skip records, so the page fails loudly.
 */
function refuseLoop(next: string | null, cursor: string | null): string | null {
  if (next !== null && next === cursor) {
    throw new ClassifiedError(
      'permanent',
      'the source returned the same cursor again; pagination would loop',
    );
  }
  return next;
}

/**
 * The cursor after `cursor`, from the response: a token, a URL (resolved against the response
 * URL, same origin only), or the next page number unless this page was empty.
 */
export function nextCursor(
  config: RestJsonConfig,
  cursor: string | null,
  page: { readonly body: unknown; readonly items: readonly unknown[]; readonly url: string },
): string | null {
  const { pagination } = config;
  switch (pagination.type) {
    case 'cursor': {
      const next = readNext(page.body, pagination.nextCursorPath, page.url);
      return refuseLoop(next === null ? null : checkCursor(next, limitsOf(config), page.url), cursor);
    }
    case 'next-url': {
      const next = readNext(page.body, pagination.nextUrlPath, page.url);
      if (next === null) return refuseLoop(null, cursor);
      const url = sameOriginUrl(checkNextUrl(next, limitsOf(config), page.url), config.url, page.url);
      return refuseLoop(checkNextUrl(url, limitsOf(config), page.url), cursor);
    }
    case 'page':
      // Only an empty page ends the stream: a short page may just be the server capping pageSize.
      return page.items.length === 0 ? null : String(pageOf(pagination, cursor) + 1);
  }
}

/**
 * The next page of a keyed listing (see `../keyset.ts`) and whether the source said so. Cursor and
 * next-url sources say it with every page. Page numbers say nothing of their own: with
 * `totalPath`, the total of the `since` listing tells whether rows remain past this page (counted
 * at `served` rows a page, the most a page held: never more than the source's true page size, so
 * a source that drops rows after its limit costs an extra request, never a row); without one the
 * next page number is a guess.
 */
export function keyedNext(
  config: RestJsonConfig,
  cursor: string | null,
  page: { readonly body: unknown; readonly items: readonly unknown[]; readonly url: string },
  served: number,
): { next: string | null; guessed: boolean } {
  const { pagination } = config;
  if (pagination.type !== 'page') return { next: nextCursor(config, cursor, page), guessed: false };
  const number = pageOf(pagination, cursor);
  const total = totalOf(config, page.body);
  if (total === null) return { next: nextCursor(config, cursor, page), guessed: true };
  // The rows the pages so far addressed, counted at this page's size: a source computes a page's
  // offset from the page size in force, which can drop mid-run (GitHub caps `per_page` silently,
  // search services shrink pages under load), so the most a page held would count rows never
  // addressed. Rows dropped after the limit make the count short: an extra request, never a row.
  // An empty page says nothing of the size: the most a page held, at least one (a source may
  // serve one row a page, whatever it was asked), so empty pages cost at most `total` requests.
  const size = page.items.length > 0 ? page.items.length : Math.max(served, 1);
  const listed = (number - pagination.firstPage) * size + page.items.length;
  if (total > listed) return { next: String(number + 1), guessed: false };
  // The total says the listing ended, but a full page says rows may follow: a total can count
  // short (Elasticsearch's `hits.total` is a lower bound past 10,000; Jira's search counts what it
  // counts), and ending on it would leave the rows past it unread by every run. Read on as without
  // a total: an empty page, or a short page's re-listing, ends it, at one more request at most.
  if (page.items.length > 0 && page.items.length >= served)
    return { next: String(number + 1), guessed: true };
  return { next: null, guessed: false };
}

/** The total from `totalPath`, when configured and a non-negative whole number (or digit string). */
export function totalOf(config: RestJsonConfig, body: unknown): number | null {
  if (config.totalPath === undefined) return null;
  const value = getPath(body, config.totalPath);
  const total = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof total === 'number' && Number.isSafeInteger(total) && total >= 0 ? total : null;
}
