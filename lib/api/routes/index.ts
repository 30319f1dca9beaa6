import { z } from 'zod';
import { buildOpenApiDocument } from '../openapi.js';
import { defineRoute, type Route } from '../route.js';
import { deadLetterRoutes } from './dead-letters.js';
import { itemRoutes } from './items.js';
import { runRoutes } from './runs.js';
import { secretBindingRoutes } from './secret-bindings.js';
import { sourceRoutes } from './sources.js';

let document: ReturnType<typeof buildOpenApiDocument> | undefined;

const openApiRoute = defineRoute({
  method: 'GET',
  path: '/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This OpenAPI 3.1 document',
  tag: 'meta',
  responses: {
    200: {
      description: 'The document',
      schema: z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' }),
    },
  },
  problems: [],
  async handle() {
    document ??= buildOpenApiDocument(API_ROUTES);
    return { status: 200, body: document };
  },
});

/** Every route of the admin API. */
export const API_ROUTES: readonly Route[] = [
  ...sourceRoutes,
  ...secretBindingRoutes,
  ...runRoutes,
  ...deadLetterRoutes,
  ...itemRoutes,
  openApiRoute,
];
