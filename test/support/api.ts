import { type ApiDeps, createApiDeps } from '../../lib/api/deps.js';
import { loadConfig } from '../../lib/config/env.js';
import { createEngineDeps } from '../../lib/engine/index.js';
import { setUpTestAws, type TestAws } from './aws.js';

/**
 * The admin API's dependencies on this test file's own resources, as the Lambda builds them
 * from its environment. Close `aws.clients` after the file.
 */
export async function setUpTestApi(hint: string): Promise<{ aws: TestAws; deps: ApiDeps }> {
  const aws = await setUpTestAws(hint);
  const config = loadConfig({
    HARVESTER_PREFIX: aws.prefix,
    AWS_ENDPOINT_URL: aws.endpoint,
    LOG_LEVEL: 'SILENT',
  });
  const engine = createEngineDeps({ config, clients: aws.clients, queues: aws.resources });
  return { aws, deps: createApiDeps(engine, { config, scheduler: aws.clients.scheduler }) };
}
