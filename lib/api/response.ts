import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { stringifyJson } from '../json/lossless.js';
import type { HarvesterLogger } from '../observability/logger.js';
import { problemFor } from './problems.js';

/** What a route answers: a status and a JSON body (none for 204). */
export interface ApiResult {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** Where a request came from, for problem `instance` and log correlation. */
export interface RequestContextInfo {
  readonly path: string;
  readonly method: string;
  readonly requestId: string;
  /** The caller's User-Agent: the harvester CLI sends `harvester-cli/<version>`. */
  readonly userAgent?: string;
  /** The caller's IAM identity (its ARN) as API Gateway's IAM authorizer vouches for it; absent locally. */
  readonly caller?: string;
}

const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** Serializes a route's result as JSON. */
export function jsonResponse(result: ApiResult, requestId: string): APIGatewayProxyStructuredResultV2 {
  const hasBody = result.body !== undefined;
  return {
    statusCode: result.status,
    headers: {
      ...COMMON_HEADERS,
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      'x-request-id': requestId,
      ...result.headers,
    },
    // Lossless: a harvested number beyond 2^53 leaves as the digits it was stored with.
    ...(hasBody ? { body: stringifyJson(result.body) } : {}),
  };
}

/**
 * Answers an error as `application/problem+json`. The only place errors become responses:
 * statuses below 500 carry the error's message; 5xx are logged in full with the request id and
 * answered with a generic detail quoting that id, so no internal message leaks to a caller.
 */
export function errorResponse(
  error: unknown,
  request: RequestContextInfo,
  logger: Pick<HarvesterLogger, 'error'>,
): APIGatewayProxyStructuredResultV2 {
  const mapped = problemFor(error);
  const { status } = mapped.problem;
  let detail = mapped.problem.detail;
  if (status >= 500) {
    logger.error('request failed', {
      requestId: request.requestId,
      method: request.method,
      path: request.path,
      error:
        error instanceof Error
          ? { name: error.name, message: error.message, stack: error.stack }
          : String(error),
    });
    detail = `An unexpected error occurred; quote request id ${request.requestId} when reporting it.`;
  }
  return {
    statusCode: status,
    headers: {
      ...COMMON_HEADERS,
      'content-type': 'application/problem+json',
      'x-request-id': request.requestId,
      ...mapped.headers,
    },
    body: JSON.stringify({ ...mapped.problem, detail, instance: request.path, requestId: request.requestId }),
  };
}
