import type { Construct } from 'constructs';
import { WORKER_TIMEOUT_SECONDS } from '../lib/config/constants.js';
import type { HarvesterConfig } from '../lib/config/env.js';
import { parseSharedSecrets, type SharedSecretOrigins } from '../lib/config/shared-secrets.js';

/** Log levels the functions accept (`LOG_LEVEL` in lib/config/env.ts). */
export type LogLevel = HarvesterConfig['logLevel'];

/**
 * Deployment knobs of Harvester, props of the `Harvester` construct. The repository's own app
 * (infra/app.ts) also reads each one from CDK context (`cdk synth -c harvester:deletionProtection=false`);
 * there a prop wins over context, context over the default. The construct never reads context.
 */
export interface HarvesterSettings {
  /**
   * Deletion protection on the four tables; when on, tables and the notification key are also
   * RETAINed if the stack is deleted. Context `harvester:deletionProtection`. Default `true`.
   */
  readonly deletionProtection: boolean;
  /**
   * Highest number of page-worker invocations the page queue's event source mapping runs at once
   * (ESM `MaximumConcurrency`, 2–1000). This is the worker's concurrency bound: it is the only
   * trigger of the worker. Context `harvester:workerMaxConcurrency`. Default `10`.
   */
  readonly workerMaxConcurrency: number;
  /**
   * Requests one credential (connector + origin + secret reference) may have in flight at once,
   * across every worker, run and partition (`MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL`; GitHub's
   * secondary limit forbids many concurrent requests per token). 0: no cap. Context
   * `harvester:maxConcurrentRequestsPerCredential`. Default `10`.
   */
  readonly maxConcurrentRequestsPerCredential: number;
  /** Per-run page budget (`MAX_PAGES_PER_RUN`). Context `harvester:maxPagesPerRun`. Default `100000`. */
  readonly maxPagesPerRun: number;
  /**
   * Most partitions a run is split into unless its start asks otherwise (`MAX_PARTITIONS_PER_RUN`,
   * 1–64; 1: runs are never split). Context `harvester:maxPartitionsPerRun`. Default `8`.
   */
  readonly maxPartitionsPerRun: number;
  /**
   * One source's share of the page workers (`MAX_WORKERS_PER_SOURCE`): no run is split into more
   * partitions than this, whatever its start asks (each partition keeps at most one page in a
   * worker at a time), so one source cannot hold every worker slot. 1 to `workerMaxConcurrency`
   * − 1. Context `harvester:maxWorkersPerSource`. Default: half of `workerMaxConcurrency` (`5`).
   */
  readonly maxWorkersPerSource: number;
  /**
   * Fewest entities worth a partition (`MIN_ENTITIES_PER_PARTITION`): smaller runs are split less,
   * or not at all. Context `harvester:minEntitiesPerPartition`. Default `250`.
   */
  readonly minEntitiesPerPartition: number;
  /** `LOG_LEVEL` of every function. Context `harvester:logLevel`. Default `INFO`. */
  readonly logLevel: LogLevel;
  /** X-Ray active tracing on every function. Context `harvester:tracing`. Default `true`. */
  readonly tracing: boolean;
  /**
   * Hosts sources may use (`api.example.com`, `*.example.com`); empty: any public host. Enforced
   * at `PUT /sources` and before every request. Context `harvester:allowedSourceHosts`
   * (a list, or a comma-separated string). Default none.
   */
  readonly allowedSourceHosts: readonly string[];
  /**
   * Whether sources may reach private network ranges (10/8, 172.16/12, 192.168/16, 100.64/10,
   * fc00::/7). Only meaningful with a VPC-attached worker, which this stack does not create.
   * Context `harvester:allowPrivateSources`. Default `false`.
   */
  readonly allowPrivateSources: boolean;
  /**
   * Secret references every source may use besides its own `harvester/<sourceId>/…` secrets, each
   * with the explicit origins it may be sent to: `{"ssm:/org/github-token": ["https://api.github.com"]}`.
   * The worker is granted exactly these references. A reference without origins, a wildcard or an
   * ARN is refused at synth (lib/config/shared-secrets.ts). Context `harvester:sharedSecretRefs`
   * (a JSON object, or its text). Default none.
   */
  readonly sharedSecretRefs: SharedSecretOrigins;
  /**
   * Buckets `s3-objects` sources may read: the page worker is granted `s3:ListBucket` on each and
   * `s3:GetObject` on its objects, and nothing on any other bucket. Context
   * `harvester:sourceBuckets` (a list, or a comma-separated string). Default none: no bucket.
   */
  readonly sourceBuckets: readonly string[];
  /**
   * The change feed: a stream on the Items table (new images) and EventBridge Pipes that put
   * `Entity Changed` and `Entity Tombstoned` on the Harvester bus (docs/items.md). Context
   * `harvester:changeFeed`. Default `false`.
   */
  readonly changeFeed: boolean;
  /**
   * Change events carry the entity's data (up to the bus's 256 KB event size; larger entities
   * fail the pipe's batch). Context `harvester:changeFeedIncludesData`. Default `false`: ids,
   * version and run only.
   */
  readonly changeFeedIncludesData: boolean;
  /**
   * Point-in-time recovery on the Items table, which DynamoDB's export to S3 needs (exports at
   * scale, docs/items.md); the other tables always have it. Context
   * `harvester:itemsPointInTimeRecovery`. Default `true`.
   */
  readonly itemsPointInTimeRecovery: boolean;
}

/** Defaults of {@link HarvesterSettings}. */
export const DEFAULT_SETTINGS: HarvesterSettings = {
  deletionProtection: true,
  workerMaxConcurrency: 10,
  maxConcurrentRequestsPerCredential: 10,
  maxPagesPerRun: 100_000,
  maxPartitionsPerRun: 8,
  maxWorkersPerSource: 5,
  minEntitiesPerPartition: 250,
  logLevel: 'INFO',
  tracing: true,
  allowedSourceHosts: [],
  allowPrivateSources: false,
  sharedSecretRefs: {},
  sourceBuckets: [],
  changeFeed: false,
  changeFeedIncludesData: false,
  itemsPointInTimeRecovery: true,
};

/** Context keys of {@link HarvesterSettings}, as written in cdk.json or on the command line. */
export const SETTINGS_CONTEXT = {
  deletionProtection: 'harvester:deletionProtection',
  workerMaxConcurrency: 'harvester:workerMaxConcurrency',
  maxConcurrentRequestsPerCredential: 'harvester:maxConcurrentRequestsPerCredential',
  maxPagesPerRun: 'harvester:maxPagesPerRun',
  maxPartitionsPerRun: 'harvester:maxPartitionsPerRun',
  maxWorkersPerSource: 'harvester:maxWorkersPerSource',
  minEntitiesPerPartition: 'harvester:minEntitiesPerPartition',
  logLevel: 'harvester:logLevel',
  tracing: 'harvester:tracing',
  allowedSourceHosts: 'harvester:allowedSourceHosts',
  allowPrivateSources: 'harvester:allowPrivateSources',
  sharedSecretRefs: 'harvester:sharedSecretRefs',
  sourceBuckets: 'harvester:sourceBuckets',
  changeFeed: 'harvester:changeFeed',
  changeFeedIncludesData: 'harvester:changeFeedIncludesData',
  itemsPointInTimeRecovery: 'harvester:itemsPointInTimeRecovery',
} as const satisfies Record<keyof HarvesterSettings, string>;

/**
 * Function timeouts. The worker's is derived from the reliability constants (worst retry stretch
 * plus load and commit); the others are bounded by their trigger.
 */
export const FUNCTION_TIMEOUT_SECONDS = {
  worker: WORKER_TIMEOUT_SECONDS,
  /** Under the 1-minute tick, so two reaper invocations rarely overlap (fencing makes overlap safe anyway). */
  reaper: 50,
  /** A few conditional writes per dead-lettered message; a batch of 10 fits easily. */
  drain: 60,
  /** Below the HTTP API's 30 s integration timeout, so API Gateway never answers 503 for a live request. */
  api: 29,
  /**
   * A connection check: the 5 s it gives the source, a budget sleep of up to 2 s begun just before
   * that ends, and 5 s to verify the row, read the binding and give the slot back (12 s), rounded
   * up for a cold start's first KMS, SSM and DynamoDB calls. Far below the API's 29 s, so the API
   * always gets the function's answer (or its failure) before its own timeout.
   */
  sourceCheck: 15,
  /** One conditional lock, one run row and one queue message. */
  startRun: 30,
} as const;

/**
 * Powertools service name (`POWERTOOLS_SERVICE_NAME`), also the `service` dimension Powertools adds to
 * every EMF metric; lib/observability uses the same name.
 */
export const SERVICE_NAME = 'harvester';

/** Stage throttling of the admin API: an operator surface, not a public one. */
export const API_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const;

/**
 * Throttling of `POST /sources/{sourceId}/test` alone, below the stage's: each connection check
 * may hold an API function instance for its whole bound (5 s, lib/api/source-test.ts), so
 * 1 request/s with a burst of 2 keeps checks to a handful of instances at any time.
 */
export const SOURCE_TEST_ROUTE_THROTTLE = { rateLimit: 1, burstLimit: 2 } as const;

/**
 * Reserved concurrency of the API function: it can never take more of the account's Lambda
 * capacity than this, whatever is sent to it (a flood of slow checks included), and always has
 * this much for itself. An operator surface needs few instances: 20 answer hundreds of ordinary
 * requests a second. With {@link SOURCE_CHECK_RESERVED_CONCURRENCY}, and the 100 executions the
 * account must keep unreserved, the account's concurrency quota must be at least 125 (new
 * accounts may start lower: ask for the default 1,000).
 */
export const API_RESERVED_CONCURRENCY = 20;

/**
 * Reserved concurrency of the check function (`POST /sources/{sourceId}/test`): at most this many
 * connection checks run at once in the whole stack; the next one is throttled and answered 429
 * with `Retry-After`, like a busy source. 5 because:
 * - each check also holds an API function instance while it waits for the answer, so the checks
 *   must leave most of the API's {@link API_RESERVED_CONCURRENCY} to the other routes: 5 leave 15;
 * - the route's throttle lets one check a second in ({@link SOURCE_TEST_ROUTE_THROTTLE}), and a
 *   check gives its source at most 5 s: a steady stream of checks against slow hosts needs 5;
 * - with at most 2 checks per source (lib/store/source-test-leases.ts), 5 still lets three
 *   sources be checked at once.
 */
export const SOURCE_CHECK_RESERVED_CONCURRENCY = 5;

const LOG_LEVELS: readonly LogLevel[] = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'];

function contextBoolean(value: unknown, key: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context ${key} must be true or false, got ${String(value)}`);
}

function contextInteger(value: unknown, key: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`context ${key} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return n;
}

function contextLogLevel(value: unknown, key: string): LogLevel | undefined {
  if (value === undefined) return undefined;
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new Error(`context ${key} must be one of ${LOG_LEVELS.join(', ')}, got ${String(value)}`);
  return level;
}

function contextList(value: unknown, key: string): string[] | undefined {
  if (value === undefined) return undefined;
  const entries = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(entries) || entries.some((entry) => typeof entry !== 'string' || entry.includes(','))) {
    throw new Error(
      `context ${key} must be a list of strings or a comma-separated string, got ${JSON.stringify(value)}`,
    );
  }
  return entries.map((entry: string) => entry.trim()).filter((entry) => entry.length > 0);
}

/**
 * Resolves the settings of the repository's own app: explicit props, then CDK context, then
 * {@link DEFAULT_SETTINGS}. Context values typed on the command line arrive as strings, so they are
 * parsed and validated here. The construct itself never reads context ({@link settingsFromProps}).
 */
export function resolveSettings(scope: Construct, props: Partial<HarvesterSettings> = {}): HarvesterSettings {
  return resolve((key) => scope.node.tryGetContext(SETTINGS_CONTEXT[key]), props);
}

/**
 * The settings of a `Harvester` construct: its props, then {@link DEFAULT_SETTINGS} (shared secret
 * references, bucket names and the worker share are checked as from context). No CDK context is
 * read: a construct in someone else's app takes its settings from props alone.
 */
export function settingsFromProps(props: Partial<HarvesterSettings> = {}): HarvesterSettings {
  return resolve(() => undefined, props);
}

function resolve(
  ctx: (key: keyof HarvesterSettings) => unknown,
  props: Partial<HarvesterSettings>,
): HarvesterSettings {
  const k = SETTINGS_CONTEXT;
  const workerMaxConcurrency =
    props.workerMaxConcurrency ??
    contextInteger(ctx('workerMaxConcurrency'), k.workerMaxConcurrency, 2, 1_000) ??
    DEFAULT_SETTINGS.workerMaxConcurrency;
  return {
    deletionProtection:
      props.deletionProtection ??
      contextBoolean(ctx('deletionProtection'), k.deletionProtection) ??
      DEFAULT_SETTINGS.deletionProtection,
    workerMaxConcurrency,
    maxWorkersPerSource: sourceShare(
      props.maxWorkersPerSource ??
        contextInteger(ctx('maxWorkersPerSource'), k.maxWorkersPerSource, 1, workerMaxConcurrency - 1),
      workerMaxConcurrency,
    ),
    maxConcurrentRequestsPerCredential:
      props.maxConcurrentRequestsPerCredential ??
      contextInteger(
        ctx('maxConcurrentRequestsPerCredential'),
        k.maxConcurrentRequestsPerCredential,
        0,
        1_000,
      ) ??
      DEFAULT_SETTINGS.maxConcurrentRequestsPerCredential,
    maxPagesPerRun:
      props.maxPagesPerRun ??
      contextInteger(ctx('maxPagesPerRun'), k.maxPagesPerRun, 1, Number.MAX_SAFE_INTEGER) ??
      DEFAULT_SETTINGS.maxPagesPerRun,
    maxPartitionsPerRun:
      props.maxPartitionsPerRun ??
      contextInteger(ctx('maxPartitionsPerRun'), k.maxPartitionsPerRun, 1, 64) ??
      DEFAULT_SETTINGS.maxPartitionsPerRun,
    minEntitiesPerPartition:
      props.minEntitiesPerPartition ??
      contextInteger(ctx('minEntitiesPerPartition'), k.minEntitiesPerPartition, 1, Number.MAX_SAFE_INTEGER) ??
      DEFAULT_SETTINGS.minEntitiesPerPartition,
    logLevel: props.logLevel ?? contextLogLevel(ctx('logLevel'), k.logLevel) ?? DEFAULT_SETTINGS.logLevel,
    tracing: props.tracing ?? contextBoolean(ctx('tracing'), k.tracing) ?? DEFAULT_SETTINGS.tracing,
    allowedSourceHosts:
      props.allowedSourceHosts ??
      contextList(ctx('allowedSourceHosts'), k.allowedSourceHosts) ??
      DEFAULT_SETTINGS.allowedSourceHosts,
    allowPrivateSources:
      props.allowPrivateSources ??
      contextBoolean(ctx('allowPrivateSources'), k.allowPrivateSources) ??
      DEFAULT_SETTINGS.allowPrivateSources,
    // On AWS a secret is never sent to loopback, so no http:// origin passes.
    sharedSecretRefs: parseSharedSecrets(
      props.sharedSecretRefs ?? ctx('sharedSecretRefs') ?? DEFAULT_SETTINGS.sharedSecretRefs,
      k.sharedSecretRefs,
      false,
    ),
    sourceBuckets: bucketNames(
      props.sourceBuckets ??
        contextList(ctx('sourceBuckets'), k.sourceBuckets) ??
        DEFAULT_SETTINGS.sourceBuckets,
      k.sourceBuckets,
    ),
    changeFeed:
      props.changeFeed ?? contextBoolean(ctx('changeFeed'), k.changeFeed) ?? DEFAULT_SETTINGS.changeFeed,
    changeFeedIncludesData:
      props.changeFeedIncludesData ??
      contextBoolean(ctx('changeFeedIncludesData'), k.changeFeedIncludesData) ??
      DEFAULT_SETTINGS.changeFeedIncludesData,
    itemsPointInTimeRecovery:
      props.itemsPointInTimeRecovery ??
      contextBoolean(ctx('itemsPointInTimeRecovery'), k.itemsPointInTimeRecovery) ??
      DEFAULT_SETTINGS.itemsPointInTimeRecovery,
  };
}

/** A source's share of the workers: as set, or half of them; always fewer than all. */
function sourceShare(share: number | undefined, workers: number): number {
  const value = share ?? Math.floor(workers / 2);
  if (!Number.isInteger(value) || value < 1 || value >= workers) {
    throw new Error(
      `maxWorkersPerSource must be an integer in [1, ${workers - 1}] (below workerMaxConcurrency), got ${value}`,
    );
  }
  return value;
}

// S3 bucket names (general purpose): also keeps IAM resource wildcards out of a setting.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function bucketNames(buckets: readonly string[], key: string): readonly string[] {
  const bad = buckets.filter((bucket) => !BUCKET_NAME.test(bucket) || bucket.includes('..'));
  if (bad.length > 0) throw new Error(`${key} must list S3 bucket names, got ${bad.join(', ')}`);
  return buckets;
}
