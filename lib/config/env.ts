import { z } from 'zod';

/**
 * Names of every AWS resource Harvester uses. Lambdas receive them through environment
 * variables set by the CDK stack; the local runtime derives them from `HARVESTER_PREFIX`.
 */
export interface ResourceNames {
  readonly syncRunsTable: string;
  readonly sourcesTable: string;
  readonly deadLettersTable: string;
  readonly itemsTable: string;
  readonly pageQueue: string;
  readonly pageDlq: string;
  readonly eventBus: string;
  /** Scheduler group holding deferral and source schedules. */
  readonly scheduleGroup: string;
}

/** The resource names for a prefix, as the local bootstrap creates them (`<prefix>-syncruns`, …). */
export function resourceNamesFor(prefix: string): ResourceNames {
  return {
    syncRunsTable: `${prefix}-syncruns`,
    sourcesTable: `${prefix}-sources`,
    deadLettersTable: `${prefix}-dead-letters`,
    itemsTable: `${prefix}-items`,
    pageQueue: `${prefix}-pages`,
    pageDlq: `${prefix}-pages-dlq`,
    eventBus: `${prefix}-bus`,
    scheduleGroup: `${prefix}-schedules`,
  };
}

const name = z.string().min(1).max(255);

/**
 * The environment, read once. Explicit resource variables (set by the stack) win over names
 * derived from `HARVESTER_PREFIX` (the local default).
 */
export const EnvSchema = z.object({
  AWS_REGION: z.string().min(1).default('us-east-1'),
  AWS_ENDPOINT_URL: z.url().optional(),
  HARVESTER_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'lowercase letters, digits and dashes, at most 41 characters')
    .default('harvester'),
  SYNC_RUNS_TABLE: name.optional(),
  SOURCES_TABLE: name.optional(),
  DEAD_LETTERS_TABLE: name.optional(),
  ITEMS_TABLE: name.optional(),
  PAGE_QUEUE_URL: z.url().optional(),
  PAGE_QUEUE_ARN: name.optional(),
  PAGE_DLQ_URL: z.url().optional(),
  EVENT_BUS_NAME: name.optional(),
  SCHEDULE_GROUP: name.optional(),
  /** Role EventBridge Scheduler assumes to send deferred pages to the queue and start runs. */
  SCHEDULER_ROLE_ARN: name.optional(),
  /** Function that a source's recurring schedule invokes to start a run. */
  START_RUN_TARGET_ARN: name.optional(),
  /** Highest number of pages one run may process: the bound that replaces Lambda's recursion guard. */
  MAX_PAGES_PER_RUN: z.coerce.number().int().positive().default(100_000),
  LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']).default('INFO'),
  /**
   * Seconds an incremental run asks before the watermark: covers sources whose writes become
   * visible out of timestamp order. Re-read entities are harmless (version-guarded loads).
   */
  WATERMARK_LOOKBACK_SECONDS: z.coerce.number().int().min(0).max(86_400).default(5),
});

/** Configuration read from the environment, after validation. */
export interface HarvesterConfig {
  readonly region: string;
  readonly endpoint: string | undefined;
  readonly prefix: string;
  readonly names: ResourceNames;
  /** Queue URLs, when known up front (Lambda); locally they are looked up by name. */
  readonly pageQueueUrl: string | undefined;
  readonly pageQueueArn: string | undefined;
  readonly pageDlqUrl: string | undefined;
  readonly schedulerRoleArn: string | undefined;
  readonly startRunTargetArn: string | undefined;
  readonly maxPagesPerRun: number;
  readonly watermarkLookbackSeconds: number;
  readonly logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
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
  return {
    region: e.AWS_REGION,
    endpoint: e.AWS_ENDPOINT_URL,
    prefix: e.HARVESTER_PREFIX,
    names: {
      syncRunsTable: e.SYNC_RUNS_TABLE ?? derived.syncRunsTable,
      sourcesTable: e.SOURCES_TABLE ?? derived.sourcesTable,
      deadLettersTable: e.DEAD_LETTERS_TABLE ?? derived.deadLettersTable,
      itemsTable: e.ITEMS_TABLE ?? derived.itemsTable,
      pageQueue: derived.pageQueue,
      pageDlq: derived.pageDlq,
      eventBus: e.EVENT_BUS_NAME ?? derived.eventBus,
      scheduleGroup: e.SCHEDULE_GROUP ?? derived.scheduleGroup,
    },
    pageQueueUrl: e.PAGE_QUEUE_URL,
    pageQueueArn: e.PAGE_QUEUE_ARN,
    pageDlqUrl: e.PAGE_DLQ_URL,
    schedulerRoleArn: e.SCHEDULER_ROLE_ARN,
    startRunTargetArn: e.START_RUN_TARGET_ARN,
    maxPagesPerRun: e.MAX_PAGES_PER_RUN,
    watermarkLookbackSeconds: e.WATERMARK_LOOKBACK_SECONDS,
    logLevel: e.LOG_LEVEL,
  };
}
