import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { createAwsClients } from '../aws/clients.js';
import { ConfigError, type HarvesterConfig, loadConfig } from '../config/env.js';
import { systemLookup } from '../connectors/url-policy.js';
import { createEngineDeps, LOCAL_SCHEDULER_ROLE_ARN } from '../engine/create.js';
import type { EngineDeps } from '../engine/deps.js';
import { LOCAL_START_RUN_ARN, SourceSchedules } from '../queue/source-schedules.js';
import type { SourceGuard } from './source-guard.js';

/**
 * What the admin API talks to: the engine's ports (stores, queue, clock, logger) plus the
 * source schedules. The Lambda, the local dev server and the tests build the same thing.
 */
export interface ApiDeps extends EngineDeps {
  readonly schedules: SourceSchedules;
  /** Where sources may point and which secrets they may use; absent means the strict AWS posture. */
  readonly sourceGuard?: SourceGuard;
}

/**
 * Adds the source schedules to the engine's dependencies. Targets come from the stack's
 * environment (`START_RUN_TARGET_ARN`, `SCHEDULER_ROLE_ARN`); on an emulator they default to the
 * ARNs the local runtime answers.
 */
export function createApiDeps(
  engine: EngineDeps,
  options: { config: HarvesterConfig; scheduler: SchedulerClient },
): ApiDeps {
  const { config, scheduler } = options;
  return {
    ...engine,
    sourceGuard: { policy: config.sourcePolicy, lookup: systemLookup },
    schedules: new SourceSchedules(scheduler, {
      groupName: config.names.scheduleGroup,
      targetArn: config.startRunTargetArn ?? LOCAL_START_RUN_ARN,
      roleArn: config.schedulerRoleArn ?? LOCAL_SCHEDULER_ROLE_ARN,
    }),
  };
}

/**
 * The API's dependencies from the Lambda environment, built once at cold start. A bad
 * environment fails here (ConfigError), before the first request.
 */
export function apiDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): ApiDeps {
  const config = loadConfig(env);
  if (!config.pageQueueUrl || !config.pageQueueArn) {
    throw new ConfigError('invalid Harvester environment:\n  PAGE_QUEUE_URL and PAGE_QUEUE_ARN are required');
  }
  const clients = createAwsClients({ region: config.region, endpoint: config.endpoint });
  const engine = createEngineDeps({
    config,
    clients,
    queues: { pageQueueUrl: config.pageQueueUrl, pageQueueArn: config.pageQueueArn },
  });
  return createApiDeps(engine, { config, scheduler: clients.scheduler });
}
