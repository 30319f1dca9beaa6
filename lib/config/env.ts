import { z } from 'zod';
import {
  type EndpointConfig,
  EndpointEnvShape,
  resolveEndpoints,
  type ServiceEndpoints,
} from './endpoints.js';
import { parseSharedSecrets, type SharedSecretOrigins } from './shared-secrets.js';

/**
 * Names of every AWS resource Harvester uses. Lambdas receive them through environment
 * variables set by the CDK stack; the local runtime derives them from `HARVESTER_PREFIX`.
 */
export interface ResourceNames {
  readonly syncRunsTable: string;
  readonly sourcesTable: string;
  readonly deadLettersTable: string;
  readonly itemsTable: string;
  /** Rate budgets, one record per credential. */
  readonly rateBudgetsTable: string;
  readonly pageQueue: string;
  readonly pageDlq: string;
  readonly eventBus: string;
  /** Scheduler group holding deferral and source schedules. */
  readonly scheduleGroup: string;
  /** The KMS HMAC key (id, ARN or alias) whose MACs make source configs and secret bindings trusted. */
  readonly configMacKey: string;
}

/** The resource names for a prefix, as the local bootstrap creates them (`<prefix>-syncruns`, …). */
export function resourceNamesFor(prefix: string): ResourceNames {
  return {
    syncRunsTable: `${prefix}-syncruns`,
    sourcesTable: `${prefix}-sources`,
    deadLettersTable: `${prefix}-dead-letters`,
    itemsTable: `${prefix}-items`,
    rateBudgetsTable: `${prefix}-rate-budgets`,
    pageQueue: `${prefix}-pages`,
    pageDlq: `${prefix}-pages-dlq`,
    eventBus: `${prefix}-bus`,
    scheduleGroup: `${prefix}-schedules`,
    configMacKey: `alias/${prefix}-config-mac`,
  };
}

const name = z.string().min(1).max(255);
const flag = z.enum(['true', 'false']).transform((value) => value === 'true');
/** A comma-separated list; blanks dropped. */
const list = z.string().transform((value) =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0),
);

/**
 * The environment, read once. Explicit resource variables (set by the stack) win over names
 * derived from `HARVESTER_PREFIX` (the local default).
 */
export const EnvSchema = z.object({
  AWS_REGION: z.string().min(1).default('us-east-1'),
  // AWS_ENDPOINT_URL, the SDK's per-service AWS_ENDPOINT_URL_<SERVICE> and HARVESTER_LOCAL.
  ...EndpointEnvShape,
  HARVESTER_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'lowercase letters, digits and dashes, at most 41 characters')
    .default('harvester'),
  SYNC_RUNS_TABLE: name.optional(),
  SOURCES_TABLE: name.optional(),
  DEAD_LETTERS_TABLE: name.optional(),
  ITEMS_TABLE: name.optional(),
  RATE_BUDGETS_TABLE: name.optional(),
  PAGE_QUEUE_URL: z.url().optional(),
  PAGE_QUEUE_ARN: name.optional(),
  PAGE_DLQ_URL: z.url().optional(),
  EVENT_BUS_NAME: name.optional(),
  SCHEDULE_GROUP: name.optional(),
  /** Role EventBridge Scheduler assumes to send deferred pages to the queue and start runs. */
  SCHEDULER_ROLE_ARN: name.optional(),
  /** Function that a source's recurring schedule invokes to start a run. */
  START_RUN_TARGET_ARN: name.optional(),
  /** Queue where Scheduler puts a scheduled start it could not deliver (the start-run DLQ). */
  START_RUN_DLQ_ARN: name.optional(),
  /** Highest number of pages one run may process: the bound that replaces Lambda's recursion guard. */
  MAX_PAGES_PER_RUN: z.coerce.number().int().positive().default(100_000),
  /**
   * Most partitions a run may be split into (a run's `partitions` start parameter may ask for
   * fewer or more, up to 64). 1: runs are never split.
   */
  MAX_PARTITIONS_PER_RUN: z.coerce.number().int().min(1).max(64).default(8),
  /**
   * One source's share of the page workers: a run is split into at most this many partitions
   * (page chains, each with at most one page in a worker at a time), whatever its start asks, so
   * one source cannot take every worker slot. The stack sets it below the worker concurrency.
   * Unset (the local runtime): no cap beyond the partition bound.
   */
  MAX_WORKERS_PER_SOURCE: z.coerce.number().int().min(1).max(1_000).optional(),
  /** A partition should hold at least this many entities: smaller runs are split less, or not at all. */
  MIN_ENTITIES_PER_PARTITION: z.coerce.number().int().min(1).default(250),
  /**
   * Requests one credential (connector + origin + secret) may have in flight at once, across every
   * worker, run and partition: GitHub's secondary limit forbids many concurrent requests per token.
   * 0: no cap. Default 10.
   */
  MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL: z.coerce.number().int().min(0).max(1_000).default(10),
  LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']).default('INFO'),
  /**
   * Seconds an incremental run asks before the watermark: covers sources whose writes become
   * visible out of timestamp order. Re-read entities are harmless (version-guarded loads).
   */
  WATERMARK_LOOKBACK_SECONDS: z.coerce.number().int().min(0).max(86_400).default(5),
  /** Source URLs may reach loopback addresses. Default: true when local (`HARVESTER_LOCAL`), false on AWS. */
  SOURCE_ALLOW_LOOPBACK: flag.optional(),
  /** Source URLs may reach private network ranges. Default: true when local, false on AWS. */
  SOURCE_ALLOW_PRIVATE: flag.optional(),
  /** Comma-separated hosts (`api.example.com`, `*.example.com`) sources may use; unset: any public host. */
  SOURCE_ALLOWED_HOSTS: list.optional(),
  /**
   * Secret references every source may use besides its own `harvester/<sourceId>/` ones, each with
   * the origins it may be sent to, as a JSON object: `{"ssm:/org/token":["https://api.github.com"]}`
   * (lib/connectors/shared-secrets.ts).
   */
  SHARED_SECRET_REFS: z.string().optional(),
  /**
   * The AWS account that must own every bucket an `s3-objects` source reads: sent as
   * `ExpectedBucketOwner` on each request, so S3 refuses a same-named bucket in another account.
   * The stack sets its own account. Unset (the local runtime): not sent.
   */
  SOURCE_BUCKET_OWNER: z
    .string()
    .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
    .optional(),
  /**
   * The KMS HMAC key that signs source configs and secret bindings (an id, ARN or alias); the
   * stack sets it. Default `alias/<prefix>-config-mac`, which the local bootstrap creates.
   */
  CONFIG_MAC_KEY_ID: name.optional(),
  /**
   * The function that runs connection checks (`POST /sources/{id}/test`) for the API, which then
   * holds no secret permission itself; the stack sets it on the API function. Unset (the local
   * runtime, the tests): the API runs checks in its own process.
   */
  SOURCE_CHECK_FUNCTION_ARN: name.optional(),
  /** Secrets Manager secret (generated by the stack) whose value signs the API's pagination cursors. */
  CURSOR_KEY_SECRET_ARN: name.optional(),
  /** Local alternative: the cursor signing key itself. Unset locally: a random key per process. */
  HARVESTER_CURSOR_KEY: z.string().min(32, 'at least 32 characters').optional(),
  /**
   * Local runtime: deliver the change feed (`Entity Changed` / `Entity Tombstoned` on the bus) from
   * the Items table's stream, as the stack's `changeFeed` setting does on AWS. Default false.
   */
  CHANGE_FEED: flag.optional(),
  /** Change events carry the entity's data (the stack's `changeFeedIncludesData`). Default false. */
  CHANGE_FEED_INCLUDES_DATA: flag.optional(),
});

/** Where source URLs may point and which secrets sources may use (see lib/connectors/url-policy.ts). */
export interface SourcePolicyConfig {
  readonly allowLoopback: boolean;
  readonly allowPrivate: boolean;
  readonly allowedHosts: readonly string[];
  readonly sharedSecrets: readonly string[];
  /** Each shared secret's origins (`SHARED_SECRET_REFS`). */
  readonly sharedSecretOrigins: SharedSecretOrigins;
}

/** Configuration read from the environment, after validation. */
export interface HarvesterConfig {
  readonly region: string;
  /** `AWS_ENDPOINT_URL`: the endpoint of every service without its own; undefined on AWS. */
  readonly endpoint: string | undefined;
  /** Each service's endpoint (`AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`); empty on AWS. */
  readonly endpoints: ServiceEndpoints;
  /** Running against emulators (`HARVESTER_LOCAL`, else any endpoint set): see lib/config/endpoints.ts. */
  readonly local: boolean;
  readonly prefix: string;
  readonly names: ResourceNames;
  /** Queue URLs, when known up front (Lambda); locally they are looked up by name. */
  readonly pageQueueUrl: string | undefined;
  readonly pageQueueArn: string | undefined;
  readonly pageDlqUrl: string | undefined;
  readonly schedulerRoleArn: string | undefined;
  readonly startRunTargetArn: string | undefined;
  readonly startRunDlqArn: string | undefined;
  readonly maxPagesPerRun: number;
  readonly maxPartitionsPerRun: number;
  /** `MAX_WORKERS_PER_SOURCE`; undefined: no cap beyond the partition bound. */
  readonly maxWorkersPerSource: number | undefined;
  readonly minEntitiesPerPartition: number;
  /** `MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL`; 0: no cap. */
  readonly maxConcurrentRequestsPerCredential: number;
  readonly watermarkLookbackSeconds: number;
  readonly logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  readonly sourcePolicy: SourcePolicyConfig;
  /** `SOURCE_BUCKET_OWNER`: the account every bucket read must belong to; undefined: not checked. */
  readonly sourceBucketOwner: string | undefined;
  /** `SOURCE_CHECK_FUNCTION_ARN`: where the API sends connection checks; undefined: its own process. */
  readonly sourceCheckFunctionArn: string | undefined;
  readonly cursorKeySecretArn: string | undefined;
  readonly cursorKey: string | undefined;
  /** The change feed: whether the local runtime delivers it, and whether events carry data. */
  readonly changeFeed: { readonly enabled: boolean; readonly includeData: boolean };
}

/** Raised at cold start when the environment is unusable; the message lists each bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Validates the environment and returns the configuration. Call once, at start; a bad
 * environment fails here with a readable message rather than deep inside a request.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): HarvesterConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid Harvester environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const derived = resourceNamesFor(e.HARVESTER_PREFIX);
  const endpoints: EndpointConfig = resolveEndpoints(e);
  // On emulators the sources are local fakes on loopback; on AWS, public hosts only.
  const allowLoopback = e.SOURCE_ALLOW_LOOPBACK ?? endpoints.local;
  let sharedSecretOrigins: SharedSecretOrigins;
  try {
    sharedSecretOrigins = parseSharedSecrets(e.SHARED_SECRET_REFS ?? '', 'SHARED_SECRET_REFS', allowLoopback);
  } catch (error) {
    throw new ConfigError(`invalid Harvester environment:\n  ${(error as Error).message}`);
  }
  return {
    region: e.AWS_REGION,
    ...endpoints,
    prefix: e.HARVESTER_PREFIX,
    names: {
      syncRunsTable: e.SYNC_RUNS_TABLE ?? derived.syncRunsTable,
      sourcesTable: e.SOURCES_TABLE ?? derived.sourcesTable,
      deadLettersTable: e.DEAD_LETTERS_TABLE ?? derived.deadLettersTable,
      itemsTable: e.ITEMS_TABLE ?? derived.itemsTable,
      rateBudgetsTable: e.RATE_BUDGETS_TABLE ?? derived.rateBudgetsTable,
      pageQueue: derived.pageQueue,
      pageDlq: derived.pageDlq,
      eventBus: e.EVENT_BUS_NAME ?? derived.eventBus,
      scheduleGroup: e.SCHEDULE_GROUP ?? derived.scheduleGroup,
      configMacKey: e.CONFIG_MAC_KEY_ID ?? derived.configMacKey,
    },
    pageQueueUrl: e.PAGE_QUEUE_URL,
    pageQueueArn: e.PAGE_QUEUE_ARN,
    pageDlqUrl: e.PAGE_DLQ_URL,
    schedulerRoleArn: e.SCHEDULER_ROLE_ARN,
    startRunTargetArn: e.START_RUN_TARGET_ARN,
    startRunDlqArn: e.START_RUN_DLQ_ARN,
    maxPagesPerRun: e.MAX_PAGES_PER_RUN,
    maxPartitionsPerRun: e.MAX_PARTITIONS_PER_RUN,
    maxWorkersPerSource: e.MAX_WORKERS_PER_SOURCE,
    minEntitiesPerPartition: e.MIN_ENTITIES_PER_PARTITION,
    maxConcurrentRequestsPerCredential: e.MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL,
    watermarkLookbackSeconds: e.WATERMARK_LOOKBACK_SECONDS,
    logLevel: e.LOG_LEVEL,
    sourcePolicy: {
      allowLoopback,
      allowPrivate: e.SOURCE_ALLOW_PRIVATE ?? endpoints.local,
      allowedHosts: e.SOURCE_ALLOWED_HOSTS ?? [],
      sharedSecrets: Object.keys(sharedSecretOrigins),
      sharedSecretOrigins,
    },
    sourceBucketOwner: e.SOURCE_BUCKET_OWNER,
    sourceCheckFunctionArn: e.SOURCE_CHECK_FUNCTION_ARN,
    cursorKeySecretArn: e.CURSOR_KEY_SECRET_ARN,
    cursorKey: e.HARVESTER_CURSOR_KEY,
    changeFeed: { enabled: e.CHANGE_FEED ?? false, includeData: e.CHANGE_FEED_INCLUDES_DATA ?? false },
  };
}
