import { createAwsClients } from '../aws/clients.js';
import { loadConfig } from '../config/env.js';
import { createLogger } from '../observability/logger.js';
import { powertoolsMetrics } from '../observability/metrics.js';
import { createEngineDeps } from './create-deps.js';
import type { EngineDeps } from './deps.js';

let cached: EngineDeps | undefined;

/**
 * The engine as a Lambda function sees it: environment validated once per cold start (a bad
 * deployment fails loudly at init), clients created once and reused across invocations.
 */
export function lambdaEngine(): EngineDeps {
  if (cached) return cached;
  const config = loadConfig();
  if (!config.pageQueueUrl || !config.pageQueueArn) {
    throw new Error('PAGE_QUEUE_URL and PAGE_QUEUE_ARN must be set for Harvester functions');
  }
  const clients = createAwsClients({ region: config.region, endpoint: config.endpoint });
  cached = createEngineDeps({
    config,
    clients,
    queues: { pageQueueUrl: config.pageQueueUrl, pageQueueArn: config.pageQueueArn },
    logger: createLogger(config.logLevel),
    metrics: powertoolsMetrics(),
  });
  return cached;
}
