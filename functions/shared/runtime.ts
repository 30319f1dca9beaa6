/**
 * What a Harvester Lambda process builds once, at cold start: the environment validated (a bad
 * deployment fails loudly at init), the Powertools logger, metrics and tracer, SDK clients
 * captured by the tracer, and the engine's dependencies on top. Invocations reuse all of it.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { type AwsClients, createAwsClients } from '../../lib/aws/clients.js';
import { ConfigError, type HarvesterConfig, loadConfig } from '../../lib/config/env.js';
import type { EngineDeps } from '../../lib/engine/index.js';
import { createEngineDeps, createSecretResolver } from '../../lib/engine/index.js';
import { createLogger } from '../../lib/observability/logger.js';
import { METRICS_NAMESPACE, powertoolsMetrics, SERVICE_NAME } from '../../lib/observability/metrics.js';
import type { LambdaObservability } from './observed.js';

/** One Lambda process's configuration, clients, engine and observability. */
export interface LambdaRuntime {
  readonly config: HarvesterConfig;
  readonly clients: AwsClients;
  readonly engine: EngineDeps;
  readonly observability: LambdaObservability;
}

let cached: LambdaRuntime | undefined;

/** The process's runtime, built on first use. */
export function lambdaRuntime(): LambdaRuntime {
  cached ??= buildRuntime();
  return cached;
}

function buildRuntime(): LambdaRuntime {
  const config = loadConfig();
  if (!config.pageQueueUrl || !config.pageQueueArn) {
    throw new ConfigError('invalid Harvester environment:\n  PAGE_QUEUE_URL and PAGE_QUEUE_ARN are required');
  }
  const observability: LambdaObservability = {
    logger: createLogger(config.logLevel),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    tracer: new Tracer({ serviceName: SERVICE_NAME }),
  };
  // Every SDK call (DynamoDB, SQS, Scheduler, EventBridge, S3, KMS, SSM, Secrets Manager) becomes
  // a subsegment of the invocation's trace.
  const capture = <T>(client: T): T => observability.tracer.captureAWSv3Client(client);
  const clients = createAwsClients({
    region: config.region,
    endpoints: config.endpoints,
    local: config.local,
    capture,
  });
  const engine = createEngineDeps({
    config,
    clients,
    queues: { pageQueueUrl: config.pageQueueUrl, pageQueueArn: config.pageQueueArn },
    logger: observability.logger,
    metrics: powertoolsMetrics(observability.metrics),
    secrets: createSecretResolver({
      region: config.region,
      endpoints: config.endpoints,
      local: config.local,
      capture,
    }),
  });
  return { config, clients, engine, observability };
}
