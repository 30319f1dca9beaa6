import { z } from 'zod';
import type { ApiDeps } from './deps.js';
import { MethodNotAllowedError, RouteNotFoundError } from './errors.js';
import type { ApiResult, RequestContextInfo } from './response.js';

/**
 * A route is declared once — method, path, schemas, responses, handler — and that declaration
 * drives both the request validation and the OpenAPI document, so the two cannot drift.
 */

/** The HTTP methods routes use. */
export const METHODS = ['GET', 'PUT', 'POST', 'DELETE'] as const;
/** One of {@link METHODS}. */
export type Method = (typeof METHODS)[number];

/** What a handler receives: validated parts of the request and the dependencies. */
export interface RouteContext<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly deps: ApiDeps;
  readonly request: RequestContextInfo;
}

/** A success response of a route, for the OpenAPI document. */
export interface SuccessResponse {
  readonly description: string;
  /** Absent for 204. */
  readonly schema?: z.ZodType;
}

/** A route's declaration. */
export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  readonly method: Method;
  /** OpenAPI path template: `/sources/{sourceId}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: 'sources' | 'secret-bindings' | 'runs' | 'dead-letters' | 'items' | 'meta';
  readonly params?: P;
  /** Default: no query parameters accepted. */
  readonly query?: Q;
  /** Absent: the route takes no body (a body sent anyway is refused as an unknown field). */
  readonly body?: B;
  readonly responses: Readonly<Record<number, SuccessResponse>>;
  /** Error statuses besides the ones every route may answer (400, 404 route, 405, 413, 415, 500). */
  readonly problems: readonly number[];
  handle(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<ApiResult>;
}

/**
 * A declared route, its types erased for the table. The table (`API_ROUTES`) is the API's one
 * inventory: the handler matches against it, and the OpenAPI document and the IAM policy test
 * are built from it.
 */
export type Route = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

const NO_PARAMS = z.strictObject({});

/** Declares a route; handler types follow from the schemas. */
export function defineRoute<
  P extends z.ZodType = typeof NO_PARAMS,
  Q extends z.ZodType = typeof NO_PARAMS,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<P, Q, B>): Route {
  return spec as unknown as Route;
}

/** The query schema a route validates against (strict empty object when it declares none). */
export function querySchemaOf(route: Route): z.ZodType {
  return route.query ?? NO_PARAMS;
}

/** The path-parameter schema of a route. */
export function paramsSchemaOf(route: Route): z.ZodType {
  return route.params ?? NO_PARAMS;
}

interface Compiled {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly names: string[];
}

const compiledCache = new WeakMap<readonly Route[], Compiled[]>();

function compile(routes: readonly Route[]): Compiled[] {
  let compiled = compiledCache.get(routes);
  if (!compiled) {
    compiled = routes.map((route) => {
      const names: string[] = [];
      const escaped = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      const source = escaped.replace(/\{(\w+)\}/g, (_match, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { route, pattern: new RegExp(`^${source}$`), names };
    });
    compiledCache.set(routes, compiled);
  }
  return compiled;
}

/**
 * Finds the route for a method and path, with its raw path parameters. A path some route has
 * but not with this method is {@link MethodNotAllowedError} (405, with the allowed methods);
 * a path no route has is {@link RouteNotFoundError}.
 *
 * The path is matched as sent, never rewritten: IAM authorizes the path API Gateway received,
 * so `/sources/acme/` or `/sources//acme` must not reach the handler of `/sources/acme` — a
 * Deny on the exact path would not cover them, nor would an owner's `/sources/acme/*` stop a
 * wildcard from reaching `/runs/`. Such a variant is a path no route has: 404.
 */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } {
  const allowed: string[] = [];
  for (const { route, pattern, names } of compile(routes)) {
    const match = pattern.exec(path);
    if (!match) continue;
    if (route.method !== method.toUpperCase()) {
      allowed.push(route.method);
      continue;
    }
    return { route, params: Object.fromEntries(names.map((name, i) => [name, match[i + 1]!])) };
  }
  if (allowed.length > 0) throw new MethodNotAllowedError(method.toUpperCase(), allowed);
  throw new RouteNotFoundError(path);
}
