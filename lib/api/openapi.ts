import type { z } from 'zod';
import type { oas31 } from 'zod-openapi';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import { configJsonSchema } from '../connectors/config-docs.js';
import { CONNECTORS } from '../connectors/registry.js';
import { ProblemSchema } from './problems.js';
import type { Route } from './route.js';
import { connectorConfigId } from './schemas/sources.js';
import { API_VERSION } from './version.js';

/**
 * The OpenAPI 3.1 document, generated from the route table: the same zod schemas validate the
 * requests and describe them here, so the document cannot disagree with the API.
 */

export { API_VERSION };

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: `errors` names each field that failed, by dot path',
  403: 'Missing or refused IAM (SigV4) signature; answered by API Gateway',
  404: 'Not found',
  405: 'This path does not take this method; the `Allow` header and `allowed` list the ones it does',
  409: 'Conflict with the current state (source busy: `activeRunId` names the active run)',
  410: 'Gone: the dead letter was resolved by a run that loaded its entity (`runId` names it)',
  413: 'Body larger than 64 KB (checked on every route, before anything else)',
  415: 'Body not sent as application/json (checked on every route that is sent a body)',
  500: 'Unexpected error; the detail quotes the request id of the log entry',
  502: 'The function the request needed failed; the detail quotes the request id of the log entry',
};

function operationOf(route: Route): ZodOpenApiOperationObject {
  // Every route may answer these: validation, IAM, method, body size and type, the unexpected.
  const statuses = new Set([400, 403, 405, 413, 415, 500, ...route.problems]);
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.schema ? { content: { 'application/json': { schema: response.schema } } } : {}),
    };
  }
  for (const status of [...statuses].sort()) {
    responses[String(status)] = {
      description: PROBLEM_DESCRIPTIONS[status] ?? 'Problem',
      ...(status === 403 ? {} : { content: { 'application/problem+json': { schema: ProblemSchema } } }),
    };
  }
  const requestParams = {
    ...(route.params ? { path: route.params as z.ZodObject } : {}),
    ...(route.query ? { query: route.query as z.ZodObject } : {}),
  };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(Object.keys(requestParams).length > 0 ? { requestParams } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: !route.body.safeParse(undefined).success,
            content: { 'application/json': { schema: route.body } },
          },
        }
      : {}),
    responses: responses as ZodOpenApiOperationObject['responses'],
  };
}

/** Where the API is served: the stack's execute-api URL (output `ApiUrl`), or a local dev server. */
export const DEFAULT_SERVERS: oas31.ServerObject[] = [
  {
    url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
    description: "The stack's admin API (the `ApiUrl` stack output)",
    variables: { apiId: { default: 'abcde12345' }, region: { default: 'us-east-1' } },
  },
  {
    url: 'http://127.0.0.1:{port}',
    description: '`harvester local`',
    variables: { port: { default: '8787' } },
  },
];

/**
 * Builds the OpenAPI 3.1 document of `routes`, served by `GET /openapi.json`; `servers`
 * defaults to {@link DEFAULT_SERVERS}.
 */
export function buildOpenApiDocument(
  routes: readonly Route[],
  servers: oas31.ServerObject[] = DEFAULT_SERVERS,
): ReturnType<typeof createDocument> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase() as 'get' | 'put' | 'post' | 'delete'] = operationOf(route);
  }
  // Rendered as plain JSON Schema of what a client sends (defaults optional): connector schemas
  // transform values, which zod-openapi refuses to render for responses.
  const connectorSchemas = Object.fromEntries(
    Object.entries(CONNECTORS).map(([name, connector]) => {
      const schema = configJsonSchema(connector.configSchema);
      return [
        connectorConfigId(name),
        { ...schema, description: `Config of the ${name} connector` } as oas31.SchemaObject,
      ];
    }),
  );
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Harvester admin API',
      version: API_VERSION,
      description:
        'Sources, runs, dead letters and harvested items of Harvester. Every route requires IAM authorization (SigV4, service `execute-api`). Errors are RFC 9457 `application/problem+json`.',
    },
    tags: [
      { name: 'sources', description: 'Configured sources and their schedules' },
      { name: 'secret-bindings', description: "Where each source's secrets may be sent" },
      { name: 'runs', description: 'Sync runs' },
      { name: 'dead-letters', description: 'Failed items and pages, and retrying them' },
      {
        name: 'items',
        description: 'Harvested entities, their provenance and change feed, and why one is missing',
      },
      { name: 'meta', description: 'This document' },
    ],
    servers,
    security: [{ sigv4: [] }],
    paths,
    components: {
      schemas: connectorSchemas,
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          name: 'Authorization',
          in: 'header',
          description: 'AWS Signature Version 4 with IAM credentials (API Gateway IAM authorization)',
          'x-amazon-apigateway-authtype': 'awsSigv4',
        },
      },
    },
  });
}
