import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ApiDeps } from './deps.js';
import { RequestValidationError } from './errors.js';
import { decodePathParams, header, readJsonBody, validate } from './request.js';
import { errorResponse, jsonResponse, type RequestContextInfo } from './response.js';
import { matchRoute, paramsSchemaOf, querySchemaOf, type Route } from './route.js';
import { API_ROUTES } from './routes/index.js';

/**
 * Answers one admin API request (an API Gateway HTTP API v2 event). The Lambda, the local dev
 * server and the tests all call this: route, validate path, query and body against the route's
 * schemas, run the handler, and turn any error into problem+json in one place.
 *
 * @example
 * const response = await handleApiRequest(event, apiDeps);
 */
export async function handleApiRequest(
  event: APIGatewayProxyEventV2,
  deps: ApiDeps,
  routes: readonly Route[] = API_ROUTES,
): Promise<APIGatewayProxyStructuredResultV2> {
  const request: RequestContextInfo = {
    method: event.requestContext?.http?.method ?? 'GET',
    path: event.rawPath || '/',
    requestId: event.requestContext?.requestId || randomUUID(),
    userAgent: header(event, 'user-agent') ?? '',
    ...callerOf(event),
  };
  try {
    const { route, params: rawParams } = matchRoute(routes, request.method, request.path);
    const params = validate(paramsSchemaOf(route), decodePathParams(rawParams), 'path');
    const query = validate(querySchemaOf(route), event.queryStringParameters ?? {}, 'query');
    const body = readBody(route, event);
    const result = await route.handle({ params, query, body, deps, request });
    return jsonResponse(result, request.requestId);
  } catch (error) {
    return errorResponse(error, request, deps.logger);
  }
}

/** The IAM identity API Gateway authorized the request as (payload 2.0: `authorizer.iam.userArn`). */
function callerOf(event: APIGatewayProxyEventV2): { caller?: string } {
  const { authorizer } = event.requestContext as { authorizer?: { iam?: { userArn?: string | null } } };
  const arn = authorizer?.iam?.userArn;
  return arn ? { caller: arn } : {};
}

function readBody(route: Route, event: APIGatewayProxyEventV2): unknown {
  const json = readJsonBody(event);
  if (!route.body) {
    if (json !== undefined)
      throw new RequestValidationError('body', [{ path: '', message: 'this request takes no body' }]);
    return undefined;
  }
  return validate(route.body, json, 'body');
}
