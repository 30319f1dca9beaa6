import { intParam, json, type Reply, type RouteContext, timeParam } from './http.js';
import type { FakeEntity } from './model.js';
import { movedIssue } from './traits/transfers.js';

/**
 * The GitHub issues shape, close enough to api.github.com that a connector built against it works
 * against the real thing: GitHub's defaults (state=open, sort=created, direction=desc, 30 per
 * page, at most 100), page-number pagination with absolute `Link` URLs, seconds-precision times,
 * and pull requests mixed into issue listings.
 */

/** GitHub's largest `per_page`. */
export const GITHUB_MAX_PER_PAGE = 100;
/** GitHub's `per_page` when the client gives none. */
export const GITHUB_DEFAULT_PER_PAGE = 30;

const LABELS = [
  { name: 'bug', color: 'd73a4a' },
  { name: 'enhancement', color: 'a2eeef' },
  { name: 'documentation', color: '0075ca' },
  { name: 'good first issue', color: '7057ff' },
] as const;

/** GitHub formats times without milliseconds: `2024-01-01T00:00:00Z`. */
export function githubTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function validationFailed(field: string): Reply {
  return json(422, {
    message: 'Validation Failed',
    errors: [{ resource: 'Issue', field, code: 'invalid' }],
    documentation_url: 'https://docs.github.com/rest/issues/issues#list-repository-issues',
    status: '422',
  });
}

/** Every third issue is closed, so `state=open` (GitHub's default) visibly misses entities. */
export function isClosed(entity: FakeEntity): boolean {
  return entity.number % 3 === 0;
}

/** The issue JSON of an entity, broken when the source currently breaks it. */
export function issueJson(ctx: RouteContext, entity: FakeEntity): Record<string, unknown> {
  const { owner = 'o', repo = 'r' } = ctx.params;
  const n = entity.number;
  const api = `${ctx.origin}/repos/${owner}/${repo}`;
  const html = `https://github.com/${owner}/${repo}`;
  // GitHub lists pull requests as issues with a `pull_request` key; connectors must expect them.
  const isPull = n % 10 === 0;
  const closed = isClosed(entity);
  // Cosmetic fields vary per issue but stay stable for the seed.
  const h = ctx.state.store.variant(entity, 'issue', 0x7fff_ffff);
  const issue: Record<string, unknown> = {
    url: `${api}/issues/${n}`,
    repository_url: api,
    html_url: `${html}/${isPull ? 'pull' : 'issues'}/${n}`,
    id: 2_000_000_000 + n,
    node_id: `I_kwFAKE${n.toString(36).toUpperCase()}`,
    number: n,
    title: entity.title,
    user: { login: `user-${h % 17}`, id: 10_000 + (h % 17), type: 'User' },
    labels: LABELS.filter((_, i) => (h >>> (i + 5)) % 4 === 0).map((l, i) => ({ id: 100 + i, ...l })),
    state: closed ? 'closed' : 'open',
    locked: false,
    comments: h % 7,
    created_at: githubTime(entity.createdAtMs),
    updated_at: githubTime(entity.updatedAtMs),
    closed_at: closed ? githubTime(entity.createdAtMs) : null,
    author_association: 'CONTRIBUTOR',
    body: entity.body,
  };
  if (isPull) {
    const pull = `${html}/pull/${n}`;
    issue.pull_request = {
      url: `${api}/pulls/${n}`,
      html_url: pull,
      diff_url: `${pull}.diff`,
      patch_url: `${pull}.patch`,
    };
  }
  if (!ctx.state.isInvalid(entity)) return issue;
  if (ctx.state.store.variant(entity, 'corrupt', 2) === 0) {
    const { updated_at: _dropped, ...rest } = issue;
    return rest;
  }
  return { ...issue, updated_at: { value: issue.updated_at } };
}

function pageUrl(ctx: RouteContext, page: number): string {
  const query = new URLSearchParams(ctx.query);
  query.set('page', String(page));
  return `${ctx.origin}${ctx.path}?${query.toString()}`;
}

/** GitHub's `Link` header: prev, next, last, first, each only where GitHub sends it. */
export function linkHeader(ctx: RouteContext, page: number, lastPage: number): string | null {
  const links: [string, number][] = [];
  if (page > 1) links.push(['prev', Math.min(page - 1, Math.max(lastPage, 1))]);
  if (page < lastPage) links.push(['next', page + 1], ['last', lastPage]);
  if (page > 1) links.push(['first', 1]);
  return links.length ? links.map(([rel, p]) => `<${pageUrl(ctx, p)}>; rel="${rel}"`).join(', ') : null;
}

/** `GET /repos/{owner}/{repo}/issues?state&sort&direction&since&per_page&page` → an array + `Link`. */
export function listIssues(ctx: RouteContext): Reply {
  const { query } = ctx;
  const state = query.get('state') ?? 'open';
  const sort = query.get('sort') ?? 'created';
  const direction = query.get('direction') ?? 'desc';
  const sinceMs = timeParam(query, 'since');
  const perPage = intParam(query, 'per_page', GITHUB_DEFAULT_PER_PAGE);
  const page = intParam(query, 'page', 1);
  if (!['open', 'closed', 'all'].includes(state)) return validationFailed('state');
  if (!['created', 'updated', 'comments'].includes(sort)) return validationFailed('sort');
  if (!['asc', 'desc'].includes(direction)) return validationFailed('direction');
  if (Number.isNaN(sinceMs)) return validationFailed('since');
  if (perPage === null || page === null) return validationFailed(perPage === null ? 'per_page' : 'page');

  const { store } = ctx.state;
  let matching = store.live().slice(sinceMs === null ? 0 : ctx.state.traits.sinceIndex(sinceMs));
  if (state !== 'all') matching = matching.filter((e) => isClosed(e) === (state === 'closed'));
  if (sort !== 'updated') matching.sort((a, b) => a.number - b.number);
  if (direction === 'desc') matching.reverse();

  const size = ctx.state.traits.limit(Math.min(perPage, GITHUB_MAX_PER_PAGE));
  const lastPage = Math.ceil(matching.length / size);
  // `Link` is decided before rows the caller may not see are dropped (post-limit filtering).
  const rows = ctx.state.traits.filter(matching.slice((page - 1) * size, page * size));
  const items = rows.map((e) => issueJson(ctx, e));
  const link = linkHeader(ctx, page, lastPage);
  return json(200, items, link ? { link } : undefined);
}

/**
 * `GET /repos/{owner}/{repo}/issues/{number}` → the issue; 404 when unknown, deleted or not found;
 * a 301 to its new repository when it was transferred (see `traits/transfers.ts`).
 */
export function getIssue(ctx: RouteContext): Reply {
  const moved = movedIssue(ctx);
  if (moved?.kind === 'redirect') {
    return json(301, { message: 'Moved Permanently', url: moved.location }, { location: moved.location });
  }
  if (moved?.kind === 'serve') {
    const issue = issueJson(ctx, moved.entity);
    const { number } = moved.moved;
    return json(200, {
      ...issue,
      number,
      id: 3_000_000_000 + number,
      updated_at: githubTime(moved.moved.movedAtMs),
    });
  }
  const entity = ctx.state.store.find(Number(ctx.params.number));
  if (!entity || ctx.state.isHiddenFromFetch(entity)) {
    return json(404, {
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest/issues/issues#get-an-issue',
      status: '404',
    });
  }
  return json(200, issueJson(ctx, entity));
}
