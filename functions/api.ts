/**
 * The admin API Lambda (API Gateway HTTP API, payload 2.0, IAM-authorized). Thin: the
 * dependencies are built once at cold start, every request goes to `handleApiRequest`, which
 * routes, validates and maps errors to problem+json.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createApiDeps } from '../lib/api/deps.js';
import { handleApiRequest } from '../lib/api/handler.js';
import { annotateWork, observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';

const { config, clients, engine, observability } = lambdaRuntime();
const deps = createApiDeps(engine, { config, scheduler: clients.scheduler });

export const handler = observed(
  observability,
  async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    annotateWork(observability.tracer, pathKeys(event.rawPath ?? ''));
    return handleApiRequest(event, deps);
  },
);

/** The source or run a request's path names (`/sources/{sourceId}/…`, `/runs/{runId}/…`). */
function pathKeys(path: string): { sourceId?: string; runId?: string } {
  const [, collection, id] = path.split('/');
  if (!id) return {};
  let value: string;
  try {
    value = decodeURIComponent(id);
  } catch {
    return {}; // A malformed escape: the router answers it; the trace just has no key.
  }
  if (collection === 'sources' || collection === 'secret-bindings') return { sourceId: value };
  return collection === 'runs' ? { runId: value } : {};
}
