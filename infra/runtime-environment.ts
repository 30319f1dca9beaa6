import { Aws } from 'aws-cdk-lib';
import type { z } from 'zod';
import type { EnvSchema } from '../lib/config/env.js';
import type { DataTables } from './constructs/data-tables.js';
import type { Messaging } from './constructs/messaging.js';
import type { HarvesterSettings } from './settings.js';

/** A variable the functions read through `EnvSchema` (lib/config/env.ts); the compiler rejects any other. */
export type EnvVariable = keyof z.input<typeof EnvSchema>;

/** Environment passed to a function: only variables `EnvSchema` knows. */
export type RuntimeEnvironment = Partial<Record<EnvVariable, string>>;

/** Inputs of {@link baseEnvironment}. */
export interface BaseEnvironmentInputs {
  readonly tables: DataTables;
  readonly messaging: Messaging;
  readonly scheduleGroupName: string;
  readonly settings: HarvesterSettings;
  /** The KMS HMAC key that signs source configs (`CONFIG_MAC_KEY_ID`). */
  readonly configMacKeyArn: string;
}

/**
 * The variables every Harvester function gets: resource names (tables, queues, bus, schedule group)
 * and settings. Names are CloudFormation references, so the functions never guess a name from a
 * prefix in AWS. The Scheduler role and start-run target are added only where schedules are created.
 */
export function baseEnvironment({
  tables,
  messaging,
  scheduleGroupName,
  settings,
  configMacKeyArn,
}: BaseEnvironmentInputs): RuntimeEnvironment {
  return {
    SYNC_RUNS_TABLE: tables.syncRuns.tableName,
    SOURCES_TABLE: tables.sources.tableName,
    DEAD_LETTERS_TABLE: tables.deadLetters.tableName,
    ITEMS_TABLE: tables.items.tableName,
    RATE_BUDGETS_TABLE: tables.rateBudgets.tableName,
    PAGE_QUEUE_URL: messaging.pageQueue.queueUrl,
    PAGE_QUEUE_ARN: messaging.pageQueue.queueArn,
    PAGE_DLQ_URL: messaging.pageDlq.queueUrl,
    EVENT_BUS_NAME: messaging.bus.eventBusName,
    SCHEDULE_GROUP: scheduleGroupName,
    MAX_PAGES_PER_RUN: String(settings.maxPagesPerRun),
    MAX_PARTITIONS_PER_RUN: String(settings.maxPartitionsPerRun),
    MAX_WORKERS_PER_SOURCE: String(settings.maxWorkersPerSource),
    MIN_ENTITIES_PER_PARTITION: String(settings.minEntitiesPerPartition),
    MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL: String(settings.maxConcurrentRequestsPerCredential),
    LOG_LEVEL: settings.logLevel,
    // The source posture (lib/connectors/url-policy.ts), explicit: on AWS never loopback.
    SOURCE_ALLOW_LOOPBACK: 'false',
    SOURCE_ALLOW_PRIVATE: String(settings.allowPrivateSources),
    SOURCE_ALLOWED_HOSTS: settings.allowedSourceHosts.join(','),
    SHARED_SECRET_REFS: JSON.stringify(settings.sharedSecretRefs),
    CONFIG_MAC_KEY_ID: configMacKeyArn,
    // s3-objects requests name the stack's account as the bucket owner, as the IAM grants do.
    SOURCE_BUCKET_OWNER: Aws.ACCOUNT_ID,
  };
}

/** Drops unset variables: Lambda's environment is a plain string map. */
export function toLambdaEnvironment(env: RuntimeEnvironment): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}
