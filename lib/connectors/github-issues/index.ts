import { ItemValidationError, SourceResponseError, safeUrl } from '../../retry/errors.js';
import type { Connector, ConnectorContext, ConnectorManifest, FetchedPage } from '../contract.js';
import { withCredential } from '../credentials.js';
import { fetchJson, type JsonResponse, sameOriginUrl } from '../http.js';
import { type LinkRelations, parseLinkHeader } from '../link-header.js';
import { classifyGitHub } from './classify.js';
import { type GithubIssuesConfig, githubIssuesConfigSchema } from './config.js';
import { isPullRequest, normalizeIssue } from './normalize.js';

export type { GithubIssuesConfig } from './config.js';
export { githubIssuesConfigSchema } from './config.js';

/**
 * The `github-issues` connector: a repository's issues (and, by default, pull requests) through
 * the GitHub REST API, oldest update first, with `Link` header pagination.
 *
 * Listing is sorted by `updated` ascending, so the stream is ordered by modification time and an
 * incremental run can resume from its checkpoint. The next cursor is the `rel="next"` URL, which
 * only the response knows.
 */
const manifest: ConnectorManifest = {
  name: 'github-issues',
  entityType: 'issue',
  orderedByModifiedTime: true,
  cursorComputableWithoutResponse: false,
};

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
    (token) => fetchJson(ctx.fetch, url, { headers: requestHeaders(token), signal: ctx.signal }),
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
 * Total issues when the links tell: `rel="last"`'s page × perPage (an upper estimate), or exact
 * on the last page. Null when pull requests are filtered out, since GitHub's count includes them
 * and a total the run can never reach would look like lost data.
 */
function estimateTotal(config: GithubIssuesConfig, links: LinkRelations, url: string, count: number) {
  if (!config.includePullRequests) return null;
  const last = pageNumber(links.last);
  if (last !== undefined) return last * config.perPage;
  if (links.next !== undefined) return null;
  const current = pageNumber(url);
  return current === undefined ? null : (current - 1) * config.perPage + count;
}

async function fetchPage(
  config: GithubIssuesConfig,
  cursor: string | null,
  ctx: ConnectorContext,
): Promise<FetchedPage> {
  const url = cursor === null ? firstPageUrl(config, ctx.since) : sameOriginUrl(cursor, config.baseUrl);
  const response = await getJson(config, url, ctx);
  if (!Array.isArray(response.body)) {
    throw new SourceResponseError(`expected an array of issues from ${safeUrl(url)}`, url);
  }
  const links = parseLinkHeader(response.headers.link, response.url);
  const next = links.next === undefined ? null : sameOriginUrl(links.next, config.baseUrl, response.url);
  const items = config.includePullRequests
    ? response.body
    : response.body.filter((raw) => !isPullRequest(raw));
  return { items, nextCursor: next, total: estimateTotal(config, links, url, response.body.length) };
}

async function fetchItem(config: GithubIssuesConfig, id: string, ctx: ConnectorContext): Promise<unknown> {
  if (!/^[1-9]\d*$/.test(id)) throw new ItemValidationError(`\`${id}\` is not a GitHub issue number`);
  const url = `${repoPath(config)}/issues/${id}`;
  const response = await getJson(config, url, ctx);
  return response.body;
}

/** The `github-issues` connector (see the module documentation and {@link githubIssuesConfigSchema}). */
export const githubIssuesConnector: Connector<GithubIssuesConfig> = {
  manifest,
  configSchema: githubIssuesConfigSchema,
  manifestFor: () => manifest,
  fetchPage,
  fetchItem,
  normalize: (_config, raw) => normalizeIssue(raw),
  classify: (error, now = Date.now()) => classifyGitHub(error, now),
};
