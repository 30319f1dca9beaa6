import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RouteNotFoundError } from '../../lib/api/errors.js';
import { matchRoute, type Route } from '../../lib/api/route.js';
import { API_ROUTES } from '../../lib/api/routes/index.js';

/**
 * The one-source owner policy of docs/deploy.md, read out of the doc itself and evaluated the way
 * IAM evaluates `execute-api:Invoke` resources, against every route the router has: the owner of
 * `acme` reaches each of acme's routes and nothing else, and no spelling of a path that the policy
 * lets through (a trailing or doubled slash) reaches a handler. A new route is covered the day it
 * is added, since the inventory is the router's own table.
 */

const ARN_PREFIX = 'arn:aws:execute-api:eu-west-1:123456789012:abcde12345/$default/';
const OWNER = 'acme';
const OTHER = 'other';

interface Statement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
}

/** The JSON policy block of the doc's "Give people access" section that holds `OwnSourceOnly`. */
function ownerPolicy(): Statement[] {
  const doc = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  const block = blocks.find((text) => text.includes('"OwnSourceOnly"'));
  if (!block) throw new Error('docs/deploy.md has no policy with the OwnSourceOnly statement');
  return (JSON.parse(block) as { Statement: Statement[] }).Statement;
}

/** IAM's resource wildcards: `*` any run of characters (`/` included), `?` exactly one. */
function wildcard(pattern: string): RegExp {
  const source = [...pattern]
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);

/** Allowed when some Allow statement matches and no Deny does (the default is deny). */
function allows(policy: Statement[], method: string, path: string): boolean {
  const resource = `${ARN_PREFIX}${method}${path}`;
  const matching = policy.filter(
    (statement) =>
      list(statement.Action).some((action) => wildcard(action).test('execute-api:Invoke')) &&
      list(statement.Resource).some((pattern) => wildcard(pattern).test(resource)),
  );
  return matching.some((s) => s.Effect === 'Allow') && !matching.some((s) => s.Effect === 'Deny');
}

/** A value of each path parameter that its schema accepts. */
const SAMPLE: Record<string, string> = {
  runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S',
  entityId: 'e1',
  entryId: 'page-0001',
};

function concrete(route: Route, sourceId: string): string {
  return route.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
    name === 'sourceId' ? sourceId : (SAMPLE[name] ?? `sample-${name}`),
  );
}

/** What the owner of `acme` may call: the routes under `/sources/{sourceId}`, for acme only. */
const ownRoute = (route: Route, sourceId: string) =>
  route.path.startsWith('/sources/{sourceId}') && sourceId === OWNER;

/** Spellings of a path that name the same resource to a lenient router but not to IAM. */
function variants(path: string): string[] {
  const slashes = [...path.matchAll(/\//g)].map((match) => match.index);
  return [`${path}/`, `${path}//`, ...slashes.map((at) => `${path.slice(0, at)}/${path.slice(at)}`)];
}

const policy = ownerPolicy();
const cases = API_ROUTES.flatMap((route) =>
  [OWNER, OTHER].map((sourceId) => ({
    name: `${route.method} ${concrete(route, sourceId)}`,
    route,
    sourceId,
    path: concrete(route, sourceId),
  })),
);

describe('the source owner policy of docs/deploy.md', () => {
  it('is found in the doc and grants only execute-api:Invoke', () => {
    expect(policy.length).toBeGreaterThan(0);
    expect(policy.flatMap((s) => list(s.Action))).toEqual(expect.arrayContaining(['execute-api:Invoke']));
  });

  it.each(cases)('$name: the owner of acme is let through only to its own routes', (c) => {
    expect(matchRoute(API_ROUTES, c.route.method, c.path).route).toBe(c.route);
    expect(allows(policy, c.route.method, c.path)).toBe(ownRoute(c.route, c.sourceId));
  });

  it.each(cases)('$name: no trailing- or doubled-slash variant the policy allows reaches a handler', (c) => {
    for (const variant of variants(c.path)) {
      expect(() => matchRoute(API_ROUTES, c.route.method, variant)).toThrow(RouteNotFoundError);
    }
  });

  it('lets the owner list none of the cross-source collections', () => {
    for (const [method, path] of [
      ['GET', '/runs'],
      ['GET', '/runs/'],
      ['GET', '/sources'],
      ['GET', '/sources/'],
      ['GET', `/runs/${SAMPLE.runId}`],
      ['POST', `/runs/${SAMPLE.runId}/cancel`],
      ['PUT', `/secret-bindings/${OWNER}`],
    ] as const) {
      expect(allows(policy, method, path), `${method} ${path}`).toBe(false);
    }
  });

  it('evaluates wildcards as IAM does: * spans slashes, ? is one character', () => {
    expect(wildcard('a/*/c').test('a/x/y/c')).toBe(true);
    expect(wildcard('a/?/c').test('a/xy/c')).toBe(false);
    expect(wildcard('a/?/c').test('a/x/c')).toBe(true);
    expect(wildcard('$default/GET').test('$default/GET')).toBe(true);
  });
});
