import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError, type HarvesterConfig } from '../config/env.js';
import { systemLookup } from '../connectors/url-policy.js';
import { type EngineDeps, LOCAL_SCHEDULER_ROLE_ARN } from '../engine/index.js';
import { DeferralSchedules } from '../queue/deferral-cleanup.js';
import { LOCAL_START_RUN_ARN, SourceSchedules } from '../queue/source-schedules.js';
import { type CursorKeySource, CursorSigner, randomCursorKey } from './cursors.js';
import { invokedSourceCheck, type SourceCheck } from './source-check.js';
import { boundedLookup, type SourceGuard } from './source-guard.js';

/**
 * What the admin API talks to: the engine's ports (stores, queue, clock, logger) plus the
 * source schedules. The Lambda, the local dev server and the tests build the same thing.
 */
export interface ApiDeps extends EngineDeps {
  readonly schedules: SourceSchedules;
  /** Where sources may point and which secrets they may use; absent means the strict AWS posture. */
  readonly sourceGuard?: SourceGuard;
  /** Signs the pagination cursors handed out and checks the ones sent back. */
  readonly cursors: CursorSigner;
  /** Pending deferral schedules of runs, deleted when a run is cancelled. */
  readonly deferrals?: DeferralSchedules;
  /**
   * Where connection checks run: the check function on AWS (`SOURCE_CHECK_FUNCTION_ARN`), so the
   * API role reads no connector secret; absent, in this process, on these deps (lib/api/source-check.ts).
   */
  readonly sourceCheck?: SourceCheck;
}

/**
 * Adds the source schedules to the engine's dependencies. Targets come from the stack's
 * environment (`START_RUN_TARGET_ARN`, `SCHEDULER_ROLE_ARN`); on an emulator they default to the
 * ARNs the local runtime answers.
 */
export function createApiDeps(
  engine: EngineDeps,
  options: {
    config: HarvesterConfig;
    scheduler: SchedulerClient;
    cursorKey?: CursorKeySource;
    /** The client that invokes the check function; default {@link createSourceCheckClient}. */
    lambda?: LambdaClient;
  },
): ApiDeps {
  const { config, scheduler } = options;
  const checkFunction = config.sourceCheckFunctionArn;
  let lambda = options.lambda;
  return {
    ...engine,
    ...(checkFunction
      ? {
          sourceCheck: invokedSourceCheck((request) => {
            lambda ??= createSourceCheckClient(config.region);
            return lambda.send(new InvokeCommand(request));
          }, checkFunction),
        }
      : {}),
    sourceGuard: { policy: config.sourcePolicy, lookup: boundedLookup(systemLookup) },
    cursors: new CursorSigner(options.cursorKey ?? cursorKeyFromConfig(config)),
    deferrals: new DeferralSchedules(scheduler, config.names.scheduleGroup),
    schedules: new SourceSchedules(scheduler, {
      groupName: config.names.scheduleGroup,
      targetArn: config.startRunTargetArn ?? LOCAL_START_RUN_ARN,
      roleArn: config.schedulerRoleArn ?? LOCAL_SCHEDULER_ROLE_ARN,
      deadLetterArn: config.startRunDlqArn,
    }),
  };
}

/**
 * The cursor signing key: the stack's generated secret (`CURSOR_KEY_SECRET_ARN`) on AWS,
 * `HARVESTER_CURSOR_KEY` when set, else a random key for this process (local only).
 */
export function cursorKeyFromConfig(config: HarvesterConfig): CursorKeySource {
  if (config.cursorKeySecretArn) {
    const secretId = config.cursorKeySecretArn;
    return async () => {
      const client = new SecretsManagerClient({ region: config.region });
      try {
        const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
        if (!SecretString) throw new ConfigError('the cursor signing secret has no value');
        return Buffer.from(SecretString, 'utf8');
      } finally {
        client.destroy();
      }
    };
  }
  if (config.cursorKey) {
    const key = Buffer.from(config.cursorKey, 'utf8');
    return async () => key;
  }
  return randomCursorKey();
}

/**
 * The Lambda client that invokes the check function: one attempt per check. A throttled check
 * answers 429 at once (its caller may retry), and a failed invocation is not sent again, which
 * could run the check twice.
 */
export function createSourceCheckClient(region: string): LambdaClient {
  return new LambdaClient({ region, maxAttempts: 1 });
}
