import type { Shape } from './fault-replies.js';
import { getIssue, listIssues } from './github.js';
import { getGitlabIssue, listGitlabIssues } from './gitlab.js';
import type { Reply, RouteContext } from './http.js';
import { getRecord, listRecords, listRecordsPaged } from './records.js';
import type { RouteName } from './stats.js';

/**
 * One route. `page` and `item` routes are the source proper: they are faulted, delayed and
 * counted as source requests. `admin` routes (truth, stats, control) never fail, so a test can
 * always ask what the source holds.
 */
export interface Route {
  readonly name: RouteName;
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  readonly kind: 'page' | 'item' | 'admin';
  readonly shape: Shape;
  /** Absent for admin routes, which the server answers itself (they need control and stats). */
  readonly handle?: (ctx: RouteContext) => Reply;
}

const REPO = '^/repos/(?<owner>[^/]+)/(?<repo>[^/]+)/issues';
// GitLab takes a numeric id or a URL-encoded path (`group%2Fproject`): one path segment either way.
const PROJECT = '^/api/v4/projects/(?<project>[^/]+)/issues';

/** Every route the fake source serves. */
export const ROUTE_TABLE: readonly Route[] = [
  {
    name: 'records',
    method: 'GET',
    pattern: /^\/records$/,
    kind: 'page',
    shape: 'rest',
    handle: listRecords,
  },
  {
    name: 'records-paged',
    method: 'GET',
    pattern: /^\/records-paged$/,
    kind: 'page',
    shape: 'rest',
    handle: listRecordsPaged,
  },
  {
    name: 'record',
    method: 'GET',
    pattern: /^\/records\/(?<id>[^/]+)$/,
    kind: 'item',
    shape: 'rest',
    handle: getRecord,
  },
  {
    name: 'github-issues',
    method: 'GET',
    pattern: new RegExp(`${REPO}$`),
    kind: 'page',
    shape: 'github',
    handle: listIssues,
  },
  {
    name: 'github-issue',
    method: 'GET',
    pattern: new RegExp(`${REPO}/(?<number>\\d+)$`),
    kind: 'item',
    shape: 'github',
    handle: getIssue,
  },
  {
    name: 'gitlab-issues',
    method: 'GET',
    pattern: new RegExp(`${PROJECT}$`),
    kind: 'page',
    shape: 'gitlab',
    handle: listGitlabIssues,
  },
  {
    name: 'gitlab-issue',
    method: 'GET',
    pattern: new RegExp(`${PROJECT}/(?<iid>\\d+)$`),
    kind: 'item',
    shape: 'gitlab',
    handle: getGitlabIssue,
  },
  { name: 'truth', method: 'GET', pattern: /^\/_truth$/, kind: 'admin', shape: 'rest' },
  { name: 'stats', method: 'GET', pattern: /^\/_stats$/, kind: 'admin', shape: 'rest' },
  { name: 'control', method: 'POST', pattern: /^\/_control$/, kind: 'admin', shape: 'rest' },
];

/** A matched route with its decoded path parameters. */
export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, string>;
}

/**
 * Finds the route of a request: a match, `'method-not-allowed'` when the path exists under
 * another method, or null. Throws URIError on a malformed percent-encoding.
 */
export function matchRoute(method: string, path: string): RouteMatch | 'method-not-allowed' | null {
  let pathExists = false;
  for (const route of ROUTE_TABLE) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    pathExists = true;
    if (route.method !== method) continue;
    const params = Object.fromEntries(
      Object.entries(match.groups ?? {}).map(([name, value]) => [name, decodeURIComponent(value)]),
    );
    return { route, params };
  }
  return pathExists ? 'method-not-allowed' : null;
}
