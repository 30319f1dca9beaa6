import { ItemValidationError, SourceResponseError, safeUrl } from '../../retry/errors.js';
import type { HeaderRecord } from '../../retry/retry-after.js';
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
import { parseLinkHeader } from '../link-header.js';
import { atPrecision, lookbackMs } from '../source-timing.js';
import { planByPosition, windowedRemaining } from '../windows.js';
import { classifyGitLab } from './classify.js';
import { type GitlabIssuesConfig, gitlabIssuesConfigSchema, limitsOf } from './config.js';
import { ensureAskedIssue } from './identity.js';
import { normalizeGitlabIssue } from './normalize.js';

export type { GitlabIssuesConfig } from './config.js';
export { gitlabIssuesConfigSchema } from './config.js';

/**
 * The `gitlab-issues` connector: a project's issues through the GitLab REST API v4
 * (`/projects/:id/issues?scope=all&order_by=updated_at&sort=asc&updated_after=…`), gitlab.com or
 * self-managed (`baseUrl`), with a token sent as `PRIVATE-TOKEN` or `Authorization: Bearer`.
 *
 * Read by keyset (see `../keyset.ts`), as `github-issues` is: each page asks
 * `updated_after=<updated_at of the last delivered issue>` (GitLab's filter is inclusive) and
 * skips the issues this run already delivered at that instant; GitLab's next page
 * (`X-Next-Page`, or `Link: rel="next"`) is followed only inside a tie group larger than a page.
 * Offset pages over an `updated_at`-ordered listing would skip an issue whenever another is edited
 * mid-run. Totals come from `X-Total` when GitLab sends it (it omits it above 10,000 results).
 *
 * Partitions: {@link planWindows} reads the count from `X-Total` of a `per_page=1` request and the
 * update time at each quantile position with `per_page=1&page=p`. Above 10,000 issues GitLab sends
 * no count, so the end of the listing is searched by reads of one issue (doubling from 10,000,
 * then bisecting): about 2·log2(N / 10,000) requests more.
 */
const manifest: ConnectorManifest = {
  name: 'gitlab-issues',
  entityType: 'issue',
  orderedByModifiedTime: true,
  cursorComputableWithoutResponse: false,
  // GitLab keeps milliseconds in `updated_at`, but `updated_after` is safest asked in whole seconds.
  sincePrecision: 's',
};

function timing(config: GitlabIssuesConfig): Partial<ConnectorManifest> {
  const lookback = lookbackMs(config);
  return lookback === undefined ? {} : { watermarkLookbackMs: lookback };
}

const USER_AGENT = 'harvester-gitlab-issues/0.1';

function requestHeaders(config: GitlabIssuesConfig, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': USER_AGENT };
  if (token === undefined) return headers;
  if (config.authHeader === 'bearer') headers.Authorization = `Bearer ${token}`;
  else headers['PRIVATE-TOKEN'] = token;
  return headers;
}

/** GETs `url` with the token, if any (re-read once if GitLab rejects it: a rotated secret). */
function getJson(config: GitlabIssuesConfig, url: string, ctx: ConnectorContext): Promise<JsonResponse> {
  return withCredential(
    ctx,
    config.tokenRef,
    (error) => classifyGitLab(error, Date.now()),
    (token) =>
      fetchJson(ctx.fetch, url, {
        headers: requestHeaders(config, token),
        signal: ctx.signal,
        maxBodyBytes: limitsOf(config).bodyBytes,
      }),
  );
}

function issuesPath(config: GitlabIssuesConfig): string {
  return `${config.baseUrl}/projects/${encodeURIComponent(config.project)}/issues`;
}

/** The listing's URL: every issue of the project, oldest update first, from `since` when given. */
export function listingUrl(
  config: GitlabIssuesConfig,
  since: string | null,
  page?: number,
  perPage = config.perPage,
): string {
  const url = new URL(issuesPath(config));
  url.searchParams.set('scope', 'all');
  url.searchParams.set('state', 'all');
  url.searchParams.set('order_by', 'updated_at');
  url.searchParams.set('sort', 'asc');
  url.searchParams.set('per_page', String(perPage));
  if (since) url.searchParams.set('updated_after', since);
  if (page !== undefined && page > 1) url.searchParams.set('page', String(page));
  return url.href;
}

function positiveInt(value: string | undefined): number | undefined {
  const n = Number(value?.trim());
  return value !== undefined && value.trim() !== '' && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/** GitLab's next page of the same listing: `X-Next-Page` (empty on the last page), else `Link: rel="next"`. */
function nextPageUrl(config: GitlabIssuesConfig, requested: string, response: JsonResponse): string | null {
  const next = positiveInt(response.headers['x-next-page']);
  if (next !== undefined) {
    const url = new URL(requested);
    url.searchParams.set('page', String(next));
    return url.href;
  }
  if (response.headers['x-next-page'] !== undefined) return null;
  const link = parseLinkHeader(response.headers.link, response.url).next;
  if (link === undefined) return null;
  return sameOriginUrl(checkNextUrl(link, limitsOf(config), requested), config.baseUrl, response.url);
}

/**
 * Issues this page and the ones after it hold, from `X-Total` (the whole `updated_after` listing)
 * minus the pages before this one; null when GitLab leaves totals out (large projects).
 */
function estimateRemaining(headers: HeaderRecord, skipped: number): number | null {
  const total = Number(headers['x-total']);
  if (headers['x-total'] === undefined || !Number.isSafeInteger(total)) return null;
  const page = positiveInt(headers['x-page']) ?? 1;
  const perPage = positiveInt(headers['x-per-page']) ?? 0;
  return Math.max(0, total - (page - 1) * perPage - skipped);
}

function issuesOf(config: GitlabIssuesConfig, response: JsonResponse, url: string): unknown[] {
  if (!Array.isArray(response.body)) {
    throw new SourceResponseError(`expected an array of issues from ${safeUrl(url)}`, url);
  }
  checkRecordCount(response.body.length, limitsOf(config), url);
  return response.body;
}

async function fetchPage(
  config: GitlabIssuesConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const position = decodePosition(cursor, ctx.since, ctx.window);
  const url =
    position.follow === undefined
      ? listingUrl(config, position.at === null ? null : atPrecision(position.at, 's'))
      : sameOriginUrl(position.follow, config.baseUrl);
  const response = await getJson(config, url, ctx);
  const listed = issuesOf(config, response, url);
  const step = advance(
    position,
    listed.map((raw) => listedKey(normalizeGitlabIssue(raw), raw)),
    nextPageUrl(config, url, response),
    { precision: 's' },
  );
  const items = listed.filter((_, index) => step.deliver[index]);
  return {
    items,
    nextCursor: step.next === null ? null : encodePosition(step.next),
    remaining: windowedRemaining(position, step, items.length, () =>
      estimateRemaining(response.headers, listed.length - items.length),
    ),
    watermarkCeiling: step.ceiling,
  };
}

/** GitLab stops counting above this many results (no `X-Total`, `X-Total-Pages` or `rel="last"`). */
const GITLAB_COUNT_LIMIT = 10_000;

/** Windows of similar size from the listing: `X-Total` and the issue at each quantile position. */
function planWindows(
  config: GitlabIssuesConfig,
  request: WindowRequest,
  ctx: ConnectorContext,
): Promise<WindowPlan> {
  return planByPosition(
    async (index) => {
      const url = listingUrl(config, ctx.since, index + 1, 1);
      const response = await getJson(config, url, ctx);
      const listed = issuesOf(config, response, url);
      const total = Number(response.headers['x-total']);
      return {
        key: listed.length === 0 ? null : listedKey(normalizeGitlabIssue(listed[0])),
        total: response.headers['x-total'] !== undefined && Number.isSafeInteger(total) ? total : null,
      };
    },
    request,
    { countAbove: GITLAB_COUNT_LIMIT, precision: 's' },
  );
}

async function fetchItem(config: GitlabIssuesConfig, id: string, ctx: ConnectorContext): Promise<unknown> {
  if (!/^[1-9]\d*$/.test(id)) throw new ItemValidationError(`\`${id}\` is not a GitLab issue iid`);
  const response = await getJson(config, `${issuesPath(config)}/${id}`, ctx);
  return ensureAskedIssue(config, id, response.body);
}

/** The `gitlab-issues` connector (see the module documentation and {@link gitlabIssuesConfigSchema}). */
export const gitlabIssuesConnector: Connector<GitlabIssuesConfig> = {
  manifest,
  configSchema: gitlabIssuesConfigSchema,
  manifestFor: (config) => ({ ...manifest, ...timing(config) }),
  streamIdentity: (config) => ({ baseUrl: config.baseUrl, project: config.project.toLowerCase() }),
  secretCarriers: (config) =>
    config.tokenRef
      ? [
          {
            reference: config.tokenRef,
            header: config.authHeader === 'bearer' ? 'Authorization' : 'PRIVATE-TOKEN',
          },
        ]
      : [],
  credential: (config) => ({ origin: new URL(config.baseUrl).origin, secretRef: config.tokenRef ?? null }),
  fetchPage,
  fetchItem,
  normalize: (_config, raw) => normalizeGitlabIssue(raw),
  classify: (error, now = Date.now()) => classifyGitLab(error, now),
  planWindows,
};
