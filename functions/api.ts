/**
 * The admin API Lambda (API Gateway HTTP API, payload 2.0, IAM-authorized). Thin: the
 * dependencies are built once at cold start, every request goes to `handleApiRequest`, which
 * routes, validates and maps errors to problem+json.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { apiDepsFromEnvironment } from '../lib/api/deps.js';
import { handleApiRequest } from '../lib/api/handler.js';

const deps = apiDepsFromEnvironment();

export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
  .use(injectLambdaContext(deps.logger, { resetKeys: true }))
  .handler((event) => handleApiRequest(event, deps));
