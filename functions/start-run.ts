/**
 * The target of every source schedule (EventBridge Scheduler invokes it with `{sourceId, mode}`).
 * Starts the run; a source that is busy (or gone) is logged and skipped, not an error, so
 * Scheduler does not retry into the same lock. Anything else fails the invocation and Scheduler
 * retries it with its own policy.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createAwsClients } from '../lib/aws/clients.js';
import { ConfigError, loadConfig } from '../lib/config/env.js';
import { createEngineDeps, type ScheduledStartOutcome, startScheduledRun } from '../lib/engine/index.js';

const config = loadConfig();
if (!config.pageQueueUrl || !config.pageQueueArn) {
  throw new ConfigError('invalid Harvester environment:\n  PAGE_QUEUE_URL and PAGE_QUEUE_ARN are required');
}
const clients = createAwsClients({ region: config.region, endpoint: config.endpoint });
const deps = createEngineDeps({
  config,
  clients,
  queues: { pageQueueUrl: config.pageQueueUrl, pageQueueArn: config.pageQueueArn },
});

export const handler = middy<unknown, ScheduledStartOutcome>()
  .use(injectLambdaContext(deps.logger, { resetKeys: true }))
  .handler((event) => startScheduledRun(deps, event));
