import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** A plain HTTP request, as the dev server reads it or a test writes it. */
export interface PlainRequest {
  readonly method: string;
  /** Path with an optional query string: `/sources?limit=5`. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** Raw body; a string is taken as UTF-8. */
  readonly body?: string | Buffer;
  readonly sourceIp?: string;
  readonly requestId?: string;
}

/**
 * The API Gateway HTTP API event (payload format 2.0) for a plain request, shaped as API Gateway
 * shapes it: lowercase header names, repeated headers and query parameters joined by commas, the
 * body base64-encoded.
 *
 * @example
 * apiGatewayEvent({ method: 'PUT', url: '/sources/a', headers: { 'content-type': 'application/json' }, body: '{}' });
 */
export function apiGatewayEvent(request: PlainRequest): APIGatewayProxyEventV2 {
  const url = new URL(request.url, 'http://127.0.0.1');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    query[name] = name in query ? `${query[name]},${value}` : value;
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const method = request.method.toUpperCase();
  const now = new Date();
  const requestId = request.requestId ?? randomUUID();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(url.search ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: body !== undefined && body.length > 0,
    ...(body !== undefined && body.length > 0 ? { body: body.toString('base64') } : {}),
  };
}
