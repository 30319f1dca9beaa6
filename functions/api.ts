/**
 * The admin API Lambda (API Gateway HTTP API, payload 2.0, IAM-authorized). Thin: the
 * dependencies are built once at cold start, every request goes to `handleApiRequest`, which
 * routes, validates and maps errors to problem+json.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createApiDeps, createSourceCheckClient } from '../lib/api/deps.js';
import { handleApiRequest } from '../lib/api/handler.js';
import { annotateWork, observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';

const { config, clients, engine, observability } = lambdaRuntime();
const deps = createApiDeps(engine, {
  config,
  scheduler: clients.scheduler,
  // The connection checks the check function runs become subsegments of the request's trace.
  lambda: observability.tracer.captureAWSv3Client(createSourceCheckClient(config.region)),
});

export const handler = observed(
  observability,
  async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    annotateWork(observability.tracer, pathKeys(event.rawPath ?? ''));
    return handleApiRequest(event, deps);
  },
);

/** The source and run a request's path names (`/sources/{sourceId}/runs/{runId}/…`, `/runs/{runId}/…`). */
function pathKeys(path: string): { sourceId?: string; runId?: string } {
  const [, collection, id, sub, subId] = path.split('/');
  if (!id) return {};
  let value: string;
  let run: string | undefined;
  try {
    value = decodeURIComponent(id);
    run = sub === 'runs' && subId ? decodeURIComponent(subId) : undefined;
  } catch {
    return {}; // A malformed escape: the router answers it; the trace just has no key.
  }
  if (collection === 'sources') return run ? { sourceId: value, runId: run } : { sourceId: value };
  if (collection === 'secret-bindings') return { sourceId: value };
  return collection === 'runs' ? { runId: value } : {};
}
