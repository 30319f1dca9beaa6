import type { AwsClients } from '../aws/clients.js';
import { kmsMacKey } from '../aws/kms-mac.js';
import { RELIABILITY } from '../config/constants.js';
import type { HarvesterConfig } from '../config/env.js';
import type { ConnectorAwsClients, SecretResolver } from '../connectors/contract.js';
import { guardedFetch } from '../connectors/guarded-fetch.js';
import { getConnector } from '../connectors/registry.js';
import { bindSecrets } from '../connectors/secret-binding.js';
import { createLogger, type HarvesterLogger } from '../observability/logger.js';
import { type EngineMetrics, noMetrics } from '../observability/metrics.js';
import { PageQueue } from '../queue/page-queue.js';
import { type RetryDeps, realRetryDeps } from '../retry/outcome.js';
import { ChainStore } from '../store/chains.js';
import { DeadLetterStore } from '../store/dead-letters.js';
import { ItemCounts } from '../store/item-counts.js';
import { ItemListing } from '../store/item-listing.js';
import { ItemStore } from '../store/items.js';
import { RunLifecycle } from '../store/lifecycle.js';
import { PositionStore } from '../store/positions.js';
import { RateBudgetStore } from '../store/rate-budgets.js';
import { RunEventLog } from '../store/run-event-log.js';
import { SecretBindingStore } from '../store/secret-bindings.js';
import { SeenIndex } from '../store/seen-index.js';
import { SeenPageStore } from '../store/seen-pages.js';
import { SourceTestLeases } from '../store/source-test-leases.js';
import { SourceStore } from '../store/sources.js';
import { SyncRunStore } from '../store/sync-runs.js';
import type { Clock, ConnectorLookup, EngineDeps, EngineHooks } from './deps.js';
import { RunEvents } from './run/events.js';
import { ConfigTrust } from './sources/config-trust.js';
import { createSecretResolver } from './sources/secrets.js';

/** The queue addresses the engine needs. */
export interface EngineQueues {
  readonly pageQueueUrl: string;
  readonly pageQueueArn: string;
}

/** Options of {@link createEngineDeps}; everything but config, clients and queues has a production default. */
export interface EngineOptions {
  readonly config: HarvesterConfig;
  readonly clients: AwsClients;
  readonly queues: EngineQueues;
  readonly logger?: HarvesterLogger;
  readonly metrics?: EngineMetrics;
  readonly fetch?: typeof fetch;
  /** Default: the S3 clients of `clients` (tests inject a fault-injecting one). */
  readonly connectorAws?: ConnectorAwsClients;
  readonly clock?: Clock;
  readonly retry?: RetryDeps;
  readonly connectors?: ConnectorLookup;
  readonly secrets?: SecretResolver;
  readonly hooks?: EngineHooks;
  readonly heartbeatIntervalMs?: number;
  /**
   * Longest deferral sent as an SQS delay (default 900 s, the SQS maximum); longer ones become
   * one-time schedules. 0 on a movable clock, whose time SQS delays do not follow.
   */
  readonly maxQueueDelayMs?: number;
  /**
   * Whether source requests spend their credential's rate budget. Default true; tests of the
   * retry and deferral machinery that share one fake source across cases turn it off, so one
   * case's `Retry-After` does not pause the next case's runs.
   */
  readonly rateBudgets?: boolean;
  /** Tests shorten it so budget waits of a few seconds take the deferral path. */
  readonly maxInlineBudgetWaitMs?: number;
}

/** Role ARN used for Scheduler targets on an emulator (moto stores it, nothing assumes it). */
export const LOCAL_SCHEDULER_ROLE_ARN = 'arn:aws:iam::123456789012:role/harvester-scheduler';

/** Wires the stores, queue, events and connectors into the engine's dependencies. */
export function createEngineDeps(options: EngineOptions): EngineDeps {
  const { config, clients, queues } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const runs = new SyncRunStore(clients.doc, config.names.syncRunsTable);
  const sources = new SourceStore(clients.doc, config.names.sourcesTable);
  const seenPages = new SeenPageStore(clients.doc, config.names.syncRunsTable);
  const secrets =
    options.secrets ??
    createSecretResolver({ region: config.region, endpoints: config.endpoints, local: config.local });
  const deadLetters = new DeadLetterStore(clients.doc, config.names.deadLettersTable);
  return {
    runs,
    chains: new ChainStore(clients.doc, runs),
    positions: new PositionStore(clients.doc, config.names.syncRunsTable),
    seen: { pages: seenPages, index: new SeenIndex(clients.doc, config.names.syncRunsTable, seenPages) },
    sources,
    lifecycle: new RunLifecycle(clients.doc, runs, sources, deadLetters),
    story: new RunEventLog(clients.doc, config.names.syncRunsTable),
    deadLetters,
    items: new ItemStore(clients.doc, config.names.itemsTable, () => clock.now()),
    itemCounts: new ItemCounts(clients.doc, config.names.itemsTable),
    itemListing: new ItemListing(clients.doc, config.names.itemsTable),
    ...(options.rateBudgets === false
      ? {}
      : {
          budgets: new RateBudgetStore(clients.doc, config.names.rateBudgetsTable),
          sourceTestLeases: new SourceTestLeases(clients.doc, config.names.rateBudgetsTable),
        }),
    queue: new PageQueue(
      clients.sqs,
      queues.pageQueueUrl,
      {
        scheduler: clients.scheduler,
        groupName: config.names.scheduleGroup,
        queueArn: queues.pageQueueArn,
        roleArn: config.schedulerRoleArn ?? LOCAL_SCHEDULER_ROLE_ARN,
      },
      options.maxQueueDelayMs,
    ),
    events: new RunEvents(clients.events, config.names.eventBus),
    connectors: options.connectors ?? { get: getConnector },
    secretsFor: (sourceId) => bindSecrets(secrets, sourceId, config.sourcePolicy.sharedSecrets),
    secretBindings: new SecretBindingStore(clients.doc, config.names.sourcesTable),
    trust: new ConfigTrust(kmsMacKey(clients.kms, config.names.configMacKey)),
    sourcePolicy: config.sourcePolicy,
    // Every request a connector sends (each redirect hop too) is checked against the source posture.
    fetch: options.fetch ?? guardedFetch(config.sourcePolicy),
    connectorAws: options.connectorAws ?? {
      s3: (region) => clients.s3(region),
      ...(config.sourceBucketOwner ? { bucketOwner: config.sourceBucketOwner } : {}),
    },
    clock,
    retry: options.retry ?? realRetryDeps,
    logger: options.logger ?? createLogger(config.logLevel),
    metrics: options.metrics ?? noMetrics,
    limits: {
      maxPagesPerRun: config.maxPagesPerRun,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? RELIABILITY.heartbeatIntervalMs,
      maxConcurrentRequestsPerCredential: config.maxConcurrentRequestsPerCredential,
      maxInlineBudgetWaitMs: options.maxInlineBudgetWaitMs ?? RELIABILITY.maxInlineBudgetWaitMs,
      watermarkLookbackMs: config.watermarkLookbackSeconds * 1_000,
      maxPartitions: config.maxPartitionsPerRun,
      ...(config.maxWorkersPerSource ? { maxWorkersPerSource: config.maxWorkersPerSource } : {}),
      minEntitiesPerPartition: config.minEntitiesPerPartition,
    },
    ...(options.hooks ? { hooks: options.hooks } : {}),
  };
}
