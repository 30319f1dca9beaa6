import { ItemValidationError, SourceResponseError, safeUrl } from '../../retry/errors.js';
import type {
  Connector,
  ConnectorContext,
  ConnectorManifest,
  FetchedPage,
  WindowPlan,
  WindowRequest,
} from '../contract.js';
import { withCredential } from '../credentials.js';
import { fetchJson, type JsonResponse, sameOriginUrl } from '../http.js';
import { advance, decodePosition, encodePosition, listedKey } from '../keyset.js';
import { checkNextUrl, checkRecordCount } from '../limits.js';
import { type LinkRelations, parseLinkHeader } from '../link-header.js';
import { atPrecision, lookbackMs } from '../source-timing.js';
import { planByPosition, windowedRemaining } from '../windows.js';
import { classifyGitHub } from './classify.js';
import { type GithubIssuesConfig, githubIssuesConfigSchema, limitsOf } from './config.js';
import { ensureAskedIssue } from './identity.js';
import { isPullRequest, normalizeIssue } from './normalize.js';

export type { GithubIssuesConfig } from './config.js';
export { githubIssuesConfigSchema } from './config.js';

/**
 * The `github-issues` connector: a repository's issues (and, by default, pull requests) through
 * the GitHub REST API, oldest update first, with `Link` header pagination.
 *
 * Listing is sorted by `updated` ascending and read by keyset (see `../keyset.ts`): each page asks
 * `since=<updatedAt of the last delivered issue>` (inclusive) and skips the issues this run already
 * delivered at that instant, so an issue edited mid-run can only move ahead of the position. The
 * `rel="next"` URL is followed only inside a tie group larger than a page; otherwise it only tells
 * whether the listing goes on. So the stream is stable under concurrent change: incremental runs
 * resume from their checkpoint and move the watermark, reconciliation may tombstone.
 *
 * Partitions: {@link planWindows} counts the listing with one `per_page=1` request (`rel="last"`
 * is then the count) and reads the update time at each quantile position with `per_page=1&page=p`;
 * a partition's pages then stop at its window's end (see `../windows.ts`, `../keyset.ts`).
 */
const manifest: ConnectorManifest = {
  name: 'github-issues',
  entityType: 'issue',
  orderedByModifiedTime: true,
  cursorComputableWithoutResponse: false,
  // GitHub's `since` and its times are whole seconds.
  sincePrecision: 's',
};

function timing(config: GithubIssuesConfig): Partial<ConnectorManifest> {
  const lookback = lookbackMs(config);
  return lookback === undefined ? {} : { watermarkLookbackMs: lookback };
}

const USER_AGENT = 'harvester-github-issues/0.1';

function requestHeaders(token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    Accept: 'application/vnd.github+json',
    'X-GitHub-Api-Version': '2022-11-28',
    'User-Agent': USER_AGENT,
  };
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/** GETs `url` with the token, if any (refreshed once if GitHub rejects it as bad credentials). */
function getJson(config: GithubIssuesConfig, url: string, ctx: ConnectorContext): Promise<JsonResponse> {
  return withCredential(
    ctx,
    config.tokenRef,
    (error) => classifyGitHub(error, Date.now()),
    (token) =>
      fetchJson(ctx.fetch, url, {
        headers: requestHeaders(token),
        signal: ctx.signal,
        maxBodyBytes: limitsOf(config).bodyBytes,
      }),
  );
}

function repoPath(config: GithubIssuesConfig): string {
  return `${config.baseUrl}/repos/${encodeURIComponent(config.owner)}/${encodeURIComponent(config.repo)}`;
}

/** The first page's URL: every state, oldest update first, from `since` when the run is incremental. */
export function firstPageUrl(config: GithubIssuesConfig, since: string | null): string {
  const url = new URL(`${repoPath(config)}/issues`);
  url.searchParams.set('state', 'all');
  url.searchParams.set('sort', 'updated');
  url.searchParams.set('direction', 'asc');
  url.searchParams.set('per_page', String(config.perPage));
  if (since) url.searchParams.set('since', since);
  return url.href;
}

function pageNumber(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  const page = Number(new URL(url).searchParams.get('page') ?? '1');
  return Number.isSafeInteger(page) && page >= 1 ? page : undefined;
}

/**
 * Issues this page and the ones after it hold, estimated from the links: the pages left
 * (`rel="last"` − this page) × the page size the server really served (servers and proxies cap
 * `per_page` silently), plus this page. Exact on the last page. Null when pull requests are
 * filtered out, since GitHub's pages include them.
 */
function estimateRemaining(
  config: GithubIssuesConfig,
  links: LinkRelations,
  url: string,
  served: number,
  skipped: number,
): number | null {
  if (!config.includePullRequests) return null;
  if (links.next === undefined) return served - skipped;
  const last = pageNumber(links.last);
  const current = pageNumber(url);
  if (last === undefined || current === undefined || last < current) return null;
  return (last - current) * served + served - skipped;
}

function issuesOf(config: GithubIssuesConfig, response: JsonResponse, url: string): unknown[] {
  if (!Array.isArray(response.body)) {
    throw new SourceResponseError(`expected an array of issues from ${safeUrl(url)}`, url);
  }
  checkRecordCount(response.body.length, limitsOf(config), url);
  return response.body;
}

async function fetchPage(
  config: GithubIssuesConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const position = decodePosition(cursor, ctx.since, ctx.window);
  const url =
    position.follow === undefined
      ? firstPageUrl(config, position.at === null ? null : atPrecision(position.at, 's'))
      : sameOriginUrl(position.follow, config.baseUrl);
  const response = await getJson(config, url, ctx);
  const listed = issuesOf(config, response, url);
  const links = parseLinkHeader(response.headers.link, response.url);
  const sourceNext =
    links.next === undefined
      ? null
      : sameOriginUrl(checkNextUrl(links.next, limitsOf(config), url), config.baseUrl, response.url);
  const step = advance(
    position,
    listed.map((raw) => listedKey(normalizeIssue(raw), raw)),
    sourceNext,
    { precision: 's' },
  );
  const delivered = listed.filter((_, index) => step.deliver[index]);
  const items = config.includePullRequests ? delivered : delivered.filter((raw) => !isPullRequest(raw));
  return {
    items,
    nextCursor: step.next === null ? null : encodePosition(step.next),
    remaining: windowedRemaining(position, step, items.length, () =>
      estimateRemaining(config, links, url, listed.length, listed.length - delivered.length),
    ),
    watermarkCeiling: step.ceiling,
  };
}

/**
 * Windows of similar size from the listing itself: `per_page=1` makes `rel="last"` the count of
 * issues (pull requests included) updated since `ctx.since`, and page p the p-th oldest update.
 */
function planWindows(
  config: GithubIssuesConfig,
  request: WindowRequest,
  ctx: ConnectorContext,
): Promise<WindowPlan> {
  return planByPosition(
    async (index) => {
      const url = new URL(firstPageUrl(config, ctx.since));
      url.searchParams.set('per_page', '1');
      url.searchParams.set('page', String(index + 1));
      const response = await getJson(config, url.href, ctx);
      const listed = issuesOf(config, response, url.href);
      const links = parseLinkHeader(response.headers.link, response.url);
      // No `rel="last"` on the last page: then the count is this position plus what it holds.
      const total = pageNumber(links.last) ?? (links.next === undefined ? index + listed.length : null);
      return { key: listed.length === 0 ? null : listedKey(normalizeIssue(listed[0])), total };
    },
    request,
    { precision: 's' },
  );
}

async function fetchItem(config: GithubIssuesConfig, id: string, ctx: ConnectorContext): Promise<unknown> {
  if (!/^[1-9]\d*$/.test(id)) throw new ItemValidationError(`\`${id}\` is not a GitHub issue number`);
  const url = `${repoPath(config)}/issues/${id}`;
  const response = await getJson(config, url, ctx);
  return ensureAskedIssue(config, id, response.body);
}

/** The `github-issues` connector (see the module documentation and {@link githubIssuesConfigSchema}). */
export const githubIssuesConnector: Connector<GithubIssuesConfig> = {
  manifest,
  configSchema: githubIssuesConfigSchema,
  manifestFor: (config) => ({ ...manifest, ...timing(config) }),
  streamIdentity: (config) => ({
    baseUrl: config.baseUrl,
    owner: config.owner.toLowerCase(),
    repo: config.repo.toLowerCase(),
    includePullRequests: config.includePullRequests,
  }),
  secretCarriers: (config) =>
    config.tokenRef ? [{ reference: config.tokenRef, header: 'Authorization' }] : [],
  credential: (config) => ({ origin: new URL(config.baseUrl).origin, secretRef: config.tokenRef ?? null }),
  fetchPage,
  fetchItem,
  normalize: (_config, raw) => normalizeIssue(raw),
  classify: (error, now = Date.now()) => classifyGitHub(error, now),
  planWindows,
};
