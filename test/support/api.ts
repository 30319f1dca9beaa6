import { type ApiDeps, createApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { loadConfig } from '../../lib/config/env.js';
import { createEngineDeps } from '../../lib/engine/index.js';
import { setUpTestAws, TEST_REGION, type TestAws } from './aws.js';
import type { TestEngine } from './harness.js';

/**
 * The admin API's dependencies on this test file's own resources, as the Lambda builds them
 * from its environment. Close `aws.clients` after the file.
 */
export async function setUpTestApi(hint: string): Promise<{ aws: TestAws; deps: ApiDeps }> {
  const aws = await setUpTestAws(hint);
  const config = apiConfig(aws);
  const engine = createEngineDeps({ config, clients: aws.clients, queues: aws.resources });
  return { aws, deps: createApiDeps(engine, { config, scheduler: aws.clients.scheduler }) };
}

/** The admin API over a test file's engine (its resources, `env` added to its config), as the Lambda builds it. */
export function apiOver(engine: Pick<TestEngine, 'aws' | 'deps'>, env: Record<string, string> = {}): ApiDeps {
  return createApiDeps(engine.deps, {
    config: apiConfig(engine.aws, env),
    scheduler: engine.aws.clients.scheduler,
  });
}

/** The API's config on `aws`'s emulator and resources, `env` added. */
function apiConfig(aws: TestAws, env: Record<string, string> = {}) {
  return loadConfig({
    AWS_REGION: TEST_REGION,
    AWS_ENDPOINT_URL: aws.endpoint,
    HARVESTER_PREFIX: aws.prefix,
    LOG_LEVEL: 'SILENT',
    ...env,
  });
}

/** An answer of the admin API, its body parsed. */
export interface ApiAnswer<Body> {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly json: Body;
}

/**
 * One request to the admin API as API Gateway hands it to the Lambda: `body` (when given) sent
 * as JSON. Response bodies are typed by the caller, `any` by default for field-by-field checks.
 */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
export async function callApi<Body = any>(
  deps: ApiDeps,
  method: string,
  url: string,
  body?: unknown,
): Promise<ApiAnswer<Body>> {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const response = await handleApiRequest(
    apiGatewayEvent({
      method,
      url,
      ...(raw === undefined ? {} : { body: raw, headers: { 'content-type': 'application/json' } }),
    }),
    deps,
  );
  return {
    status: response.statusCode ?? 0,
    headers: response.headers ?? {},
    json: response.body ? (JSON.parse(response.body) as Body) : (undefined as Body),
  };
}
