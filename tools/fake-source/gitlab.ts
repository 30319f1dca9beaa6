import { intParam, json, type Reply, type RouteContext, timeParam } from './http.js';
import type { FakeEntity } from './model.js';

/**
 * The GitLab issues shape (REST API v4), close enough to gitlab.com that a connector built against
 * it works against the real thing: `/api/v4/projects/:id/issues` with a numeric id or a URL-encoded
 * path, GitLab's defaults (state=all, order_by=created_at, sort=desc, 20 per page, at most 100),
 * `updated_after` inclusive, offset pagination with `X-Page`, `X-Per-Page`, `X-Next-Page`,
 * `X-Prev-Page`, `X-Total`, `X-Total-Pages` and a `Link` header — totals and `rel="last"` left out
 * above 10,000 results, as GitLab does — `state: opened|closed`, times with milliseconds, and
 * `{"message": "404 …"}` errors. Known differences: see the README (fake source).
 */

/** GitLab's largest `per_page`. */
export const GITLAB_MAX_PER_PAGE = 100;
/** GitLab's `per_page` when the client gives none. */
export const GITLAB_DEFAULT_PER_PAGE = 20;
/** Above this many results GitLab stops counting: no `X-Total`, `X-Total-Pages` or `rel="last"`. */
export const GITLAB_COUNT_LIMIT = 10_000;
/** The numeric id of the fake project (any path or id is served as this project). */
export const GITLAB_PROJECT_ID = 4_242;

const LABELS = ['bug', 'feature', 'documentation', 'good first issue'] as const;

function invalid(parameter: string): Reply {
  return json(400, { error: `${parameter} does not have a valid value` });
}

/** Every third issue is closed (the same entities as the GitHub shape's closed issues). */
function isClosed(entity: FakeEntity): boolean {
  return entity.number % 3 === 0;
}

function user(h: number): Record<string, unknown> {
  const n = h % 17;
  return { id: 20_000 + n, username: `user-${n}`, name: `User ${n}`, state: 'active' };
}

/** The issue JSON of an entity, broken when the source currently breaks it. */
export function gitlabIssueJson(ctx: RouteContext, entity: FakeEntity): Record<string, unknown> {
  const path = ctx.params.project && /\D/.test(ctx.params.project) ? ctx.params.project : 'group/project';
  const n = entity.number;
  const web = `${ctx.origin}/${path}/-/issues/${n}`;
  const api = `${ctx.origin}/api/v4/projects/${GITLAB_PROJECT_ID}`;
  const h = ctx.state.store.variant(entity, 'issue', 0x7fff_ffff);
  const closed = isClosed(entity);
  const time = (ms: number) => new Date(ms).toISOString();
  const issue: Record<string, unknown> = {
    id: 90_000_000 + n,
    iid: n,
    project_id: GITLAB_PROJECT_ID,
    title: entity.title,
    description: entity.body,
    state: closed ? 'closed' : 'opened',
    created_at: time(entity.createdAtMs),
    updated_at: time(entity.updatedAtMs),
    closed_at: closed ? time(entity.createdAtMs) : null,
    closed_by: closed ? user(h >>> 3) : null,
    labels: LABELS.filter((_, i) => (h >>> (i + 5)) % 4 === 0),
    milestone: null,
    assignees: h % 5 === 0 ? [] : [user(h >>> 7)],
    author: user(h),
    type: 'ISSUE',
    issue_type: 'issue',
    user_notes_count: h % 7,
    merge_requests_count: 0,
    upvotes: h % 3,
    downvotes: 0,
    due_date: null,
    confidential: false,
    discussion_locked: null,
    web_url: web,
    references: { short: `#${n}`, relative: `#${n}`, full: `${path}#${n}` },
    _links: {
      self: `${api}/issues/${n}`,
      notes: `${api}/issues/${n}/notes`,
      award_emoji: `${api}/issues/${n}/award_emoji`,
      project: api,
    },
  };
  if (!ctx.state.isInvalid(entity)) return issue;
  if (ctx.state.store.variant(entity, 'corrupt', 2) === 0) {
    const { updated_at: _dropped, ...rest } = issue;
    return rest;
  }
  return { ...issue, updated_at: 'not a time' };
}

function pageUrl(ctx: RouteContext, page: number): string {
  const query = new URLSearchParams(ctx.query);
  query.set('page', String(page));
  return `${ctx.origin}${ctx.path}?${query.toString()}`;
}

/** GitLab's pagination headers for `page` of a listing of `count` results. */
export function paginationHeaders(
  ctx: RouteContext,
  page: number,
  perPage: number,
  count: number,
): Record<string, string> {
  const pages = Math.max(1, Math.ceil(count / perPage));
  const counted = count <= GITLAB_COUNT_LIMIT;
  const hasNext = page * perPage < count;
  const links: string[] = [];
  if (page > 1) links.push(`<${pageUrl(ctx, page - 1)}>; rel="prev"`);
  if (hasNext) links.push(`<${pageUrl(ctx, page + 1)}>; rel="next"`);
  links.push(`<${pageUrl(ctx, 1)}>; rel="first"`);
  if (counted) links.push(`<${pageUrl(ctx, pages)}>; rel="last"`);
  return {
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': hasNext ? String(page + 1) : '',
    'x-prev-page': page > 1 ? String(page - 1) : '',
    ...(counted ? { 'x-total': String(count), 'x-total-pages': String(pages) } : {}),
    link: links.join(', '),
  };
}

/** `GET /api/v4/projects/:id/issues?scope&state&order_by&sort&updated_after&per_page&page`. */
export function listGitlabIssues(ctx: RouteContext): Reply {
  const { query } = ctx;
  const scope = query.get('scope') ?? 'all';
  const state = query.get('state') ?? 'all';
  const orderBy = query.get('order_by') ?? 'created_at';
  const sort = query.get('sort') ?? 'desc';
  const afterMs = timeParam(query, 'updated_after');
  const perPage = intParam(query, 'per_page', GITLAB_DEFAULT_PER_PAGE);
  const page = intParam(query, 'page', 1);
  if (!['all', 'created_by_me', 'assigned_to_me'].includes(scope)) return invalid('scope');
  if (!['opened', 'closed', 'all'].includes(state)) return invalid('state');
  if (!['created_at', 'updated_at'].includes(orderBy)) return invalid('order_by');
  if (!['asc', 'desc'].includes(sort)) return invalid('sort');
  if (Number.isNaN(afterMs)) return invalid('updated_after');
  if (perPage === null || page === null) return invalid(perPage === null ? 'per_page' : 'page');

  const { store } = ctx.state;
  // Requests without a user see public issues; the fake's issues are all public, and scopes
  // other than `all` match nothing for the fake's anonymous-looking users.
  let matching =
    scope === 'all' ? store.live().slice(afterMs === null ? 0 : ctx.state.traits.sinceIndex(afterMs)) : [];
  if (state !== 'all') matching = matching.filter((e) => isClosed(e) === (state === 'closed'));
  // Listing order is (updated_at, id); GitLab breaks ties by id too.
  if (orderBy === 'created_at') matching = [...matching].sort((a, b) => a.number - b.number);
  if (sort === 'desc') matching = [...matching].reverse();

  const size = ctx.state.traits.limit(Math.min(perPage, GITLAB_MAX_PER_PAGE));
  // The pagination headers are decided before rows the caller may not see are dropped.
  const rows = ctx.state.traits.filter(matching.slice((page - 1) * size, page * size));
  const items = rows.map((e) => gitlabIssueJson(ctx, e));
  return json(200, items, paginationHeaders(ctx, page, size, matching.length));
}

/** `GET /api/v4/projects/:id/issues/:iid` → the issue; 404 when unknown, deleted or hidden. */
export function getGitlabIssue(ctx: RouteContext): Reply {
  const entity = ctx.state.store.find(Number(ctx.params.iid));
  if (!entity || ctx.state.isHiddenFromFetch(entity)) return json(404, { message: '404 Not found' });
  return json(200, gitlabIssueJson(ctx, entity));
}

/**
 * GitLab's rate-limit headers (`RateLimit-*`) in place of GitHub's `X-RateLimit-*`: the same
 * quota, named as GitLab names it, on every answer of a GitLab route.
 */
export function gitlabRateLimitHeaders(github: Record<string, string>): Record<string, string> {
  const reset = Number(github['x-ratelimit-reset'] ?? '0');
  return {
    'ratelimit-limit': github['x-ratelimit-limit'] ?? '0',
    'ratelimit-observed': github['x-ratelimit-used'] ?? '0',
    'ratelimit-remaining': github['x-ratelimit-remaining'] ?? '0',
    'ratelimit-reset': String(reset),
    'ratelimit-resettime': new Date(reset * 1_000).toUTCString(),
  };
}
