import { afterAll, beforeAll } from 'vitest';
import { urlFields } from '../../lib/api/source-guard.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { DynamoFaultPlan, DynamoFaults } from '../../lib/aws/dynamo-faults.js';
import { loadConfig } from '../../lib/config/env.js';
import { sameSecret, secretReferences } from '../../lib/connectors/secret-binding.js';
import type { EngineDeps } from '../../lib/engine/index.js';
import { createEngineDeps, type EngineOptions, startRun } from '../../lib/engine/index.js';
import { LocalRuntime, type LocalRuntimeOptions } from '../../lib/local/runtime.js';
import { createLogger } from '../../lib/observability/logger.js';
import type { BootstrapOptions } from '../../lib/resources/bootstrap.js';
import type { RetryDeps } from '../../lib/retry/outcome.js';
import { runParamsHash, stableHash } from '../../lib/run/hash.js';
import { isTerminal, type RunMode, type SyncRun } from '../../lib/run/model.js';
import { type FakeSource, type FakeSourceOptions, startFakeSource } from '../../tools/fake-source/index.js';
import { setUpTestAws, TEST_REGION, type TestAws } from './aws.js';
import { withDynamoFaults } from './dynamo-faults.js';
import { newRun } from './runs.js';

/** Retry timing for tests: real backoff decisions, sleeps shortened a hundredfold. */
export function fastRetry(scale = 0.01): RetryDeps {
  return {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.round(ms * scale))),
    random: Math.random,
  };
}

/** An engine wired to this test file's own resources on the emulator. */
export interface TestEngine {
  readonly aws: TestAws;
  /** The DynamoDB fault layer under the engine's stores, when the file asked for one (`dynamoFaults`). */
  readonly faults: DynamoFaults | undefined;
  readonly deps: EngineDeps;
  /** Creates (does not start) a local runtime over this engine. */
  runtime(options?: Partial<Omit<LocalRuntimeOptions, 'deps' | 'clients' | 'resources'>>): LocalRuntime;
  /** Stops every runtime created here (worker processes included) and closes the clients. Call in afterAll. */
  stop(): Promise<void>;
}

/** The engine's own options in a test, the bootstrap of its resources, extra config environment. */
export type TestEngineOptions = Partial<Omit<EngineOptions, 'config' | 'clients' | 'queues'>> & {
  bootstrap?: BootstrapOptions;
  /** Extra environment for the engine's config (`WATERMARK_LOOKBACK_SECONDS`, …). */
  env?: Record<string, string>;
  /**
   * The engine's stores (not the test's own checks, nor worker processes) go through the DynamoDB
   * fault layer with this plan (lib/aws/dynamo-faults.ts).
   */
  dynamoFaults?: DynamoFaultPlan;
};

/**
 * Sets up resources and an engine for one test file; `stop()` after the file. Only
 * {@link useEngineWithFakes} calls it: a test file sets up through that, so every file's engine
 * is stopped the same way.
 */
async function setUpTestEngine(hint: string, options: TestEngineOptions = {}): Promise<TestEngine> {
  const aws = await setUpTestAws(hint, options.bootstrap);
  const config = loadConfig({
    AWS_REGION: TEST_REGION,
    AWS_ENDPOINT_URL: aws.endpoint,
    HARVESTER_PREFIX: aws.prefix,
    LOG_LEVEL: 'SILENT',
    // Tests read one ordered stream unless they ask for partitions (their page numbers, crash
    // points and request counts are those of a single stream).
    MAX_PARTITIONS_PER_RUN: '1',
    ...options.env,
  });
  const { bootstrap: _bootstrap, env: _env, dynamoFaults, ...engineOptions } = options;
  const faulty = dynamoFaults ? await withDynamoFaults(aws, dynamoFaults) : undefined;
  const deps = createEngineDeps({
    config,
    clients: faulty?.clients ?? aws.clients,
    queues: { pageQueueUrl: aws.resources.pageQueueUrl, pageQueueArn: aws.resources.pageQueueArn },
    logger: createLogger(process.env.HARVESTER_TEST_LOG === '1' ? 'DEBUG' : 'SILENT'),
    retry: fastRetry(),
    heartbeatIntervalMs: 1_000,
    ...engineOptions,
  });
  const runtimes: LocalRuntime[] = [];
  return {
    async stop() {
      await Promise.all(runtimes.map((r) => r.stop()));
      destroyAwsClients(aws.clients);
      if (faulty) {
        destroyAwsClients(faulty.clients);
        faulty.faults.destroy();
      }
    },
    aws,
    faults: faulty?.faults,
    deps,
    runtime(runtimeOptions = {}) {
      const runtime = new LocalRuntime({
        deps,
        clients: aws.clients,
        resources: aws.resources,
        redeliveryDelay: () => 1,
        ...runtimeOptions,
      });
      runtimes.push(runtime);
      return runtime;
    },
  };
}

/** The environment a worker process of `engine`'s runtime needs (`workerEnv`): the emulator and the file's resources. */
export function workerProcessEnv(engine: Pick<TestEngine, 'aws'>): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: engine.aws.endpoint,
    AWS_REGION: TEST_REGION,
    HARVESTER_PREFIX: engine.aws.prefix,
    LOG_LEVEL: 'SILENT',
    MAX_PARTITIONS_PER_RUN: '1',
  };
}

/** Polls a run until `until` holds (default: terminal) or the timeout passes. */
export async function waitForRun(
  deps: EngineDeps,
  runId: string,
  // Ended and its outcome event out (the outbox cleared), so later reads see the same row.
  until: (run: SyncRun) => boolean = (run) => isTerminal(run.state) && run.outboxAt === null,
  timeoutMs = 90_000,
): Promise<SyncRun> {
  const deadline = Date.now() + timeoutMs;
  let run = await deps.runs.require(runId);
  while (!until(run)) {
    if (Date.now() > deadline) {
      throw new Error(
        `run ${runId} did not reach the expected state in ${timeoutMs} ms: ${JSON.stringify(run)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    run = await deps.runs.require(runId);
  }
  return run;
}

/** Registers a source directly in the store (the API's job in production). */
export async function putSource(
  deps: EngineDeps,
  sourceId: string,
  connector: string,
  config: Record<string, unknown>,
): Promise<void> {
  await deps.sources.put(
    { sourceId, connector, config, schedules: [], configHash: stableHash({ connector, config }) },
    Date.now(),
  );
}

/**
 * Registers a source as the API would with its secrets: the config signed, and every secret
 * reference of the config that is the source's own bound to the origins of the config's URLs.
 */
export async function putTrustedSource(
  deps: EngineDeps,
  sourceId: string,
  connector: string,
  config: Record<string, unknown>,
): Promise<void> {
  const origins = [...new Set(urlFields(config).map(({ url }) => new URL(url).origin))];
  const own = secretReferences(config).filter(
    ({ reference }) => !deps.sourcePolicy.sharedSecrets.some((shared) => sameSecret(shared, reference)),
  );
  if (own.length > 0) {
    const bindings = Object.fromEntries(own.map(({ reference }) => [reference, origins]));
    await deps.secretBindings.put(
      sourceId,
      bindings,
      await deps.trust.signBindings(sourceId, bindings),
      Date.now(),
    );
  }
  await deps.sources.put(
    {
      sourceId,
      connector,
      config,
      schedules: [],
      configHash: stableHash({ connector, config }),
      configMac: await deps.trust.signConfig(sourceId, connector, config),
    },
    Date.now(),
  );
}

/**
 * A queued full run of a registered source, created as startRun would but without sending its
 * first page message: the test decides what is delivered (or lost).
 */
export async function createQueuedRun(deps: EngineDeps, sourceId: string): Promise<string> {
  const now = deps.clock.now();
  const source = await deps.sources.require(sourceId);
  const config = deps.connectors.get(source.connector).configSchema.parse(source.config) as Record<
    string,
    unknown
  >;
  const run = await deps.lifecycle.createHoldingLock(
    newRun({
      sourceId,
      params: { since: null, scope: null, configHash: source.configHash },
      // The hash a run of this source's current config has, so the reaper sees no reconfiguration.
      paramsHash: runParamsHash({ mode: 'full', connector: source.connector, config, scope: null }),
      now,
    }),
  );
  return run.runId;
}

export { fakeRestConfig } from '../../tools/fake-source/connector-config.js';

/** A test file's engine under a running local runtime, and the fake sources it starts. */
export interface EngineWithFakes {
  /** The file's engine (set up in `beforeAll`; read it inside tests and hooks). */
  readonly engine: TestEngine;
  /**
   * The runtime polling the file's page queue (its reaper timer is off: tests reap by hand).
   * With `workers: 0` and no worker processes there is none: the file drives steps itself or
   * starts its own with `engine.runtime(…)`, and reading this fails.
   */
  readonly runtime: Pick<LocalRuntime, 'reapNow' | 'workerPids' | 'syncWorkerClocks'>;
  /** Starts a fake source that is stopped after the file. */
  startFake(options: FakeSourceOptions): Promise<FakeSource>;
  /** Starts a run of `mode` and waits until it ended and its outcome event is out. */
  runToEnd(sourceId: string, mode: RunMode, timeoutMs?: number): Promise<SyncRun>;
}

/** Options of {@link useEngineWithFakes}: the engine's (a movable `clock`, hooks, …) and its runtime's. */
export type EngineWithFakesOptions = TestEngineOptions & {
  /** In-process workers of the file's runtime (default 2); 0 with no worker processes starts no runtime at all. */
  workers?: number;
  /**
   * More options of the file's runtime (a change feed, a reaper timer, `processWorkers`, …).
   * Worker processes are given the file's emulator, resources and `env` (`workerEnv` adds to them).
   */
  runtime?: Partial<Omit<LocalRuntimeOptions, 'deps' | 'clients' | 'resources' | 'workers'>>;
};

/**
 * The setup the engine-level integration files share: an engine on the file's own resources
 * (`hint` names them), a local runtime with `workers` in-process workers (default 2) and no reaper
 * timer, and the fake sources the file starts — all stopped after the file. Call it at the top
 * level of a test file. A file that steps pages by hand passes `workers: 0`; one that needs
 * a movable clock passes `clock` (the engine and its runtime share it); one that runs pages in
 * worker processes passes `runtime: { processWorkers }` (and `workers: 0` for those alone).
 *
 * @example
 * const { engine, startFake, runToEnd } = useEngineWithFakes('live', { heartbeatIntervalMs: 500 });
 */
export function useEngineWithFakes(hint: string, options: EngineWithFakesOptions = {}): EngineWithFakes {
  const { workers = 2, runtime: runtimeOptions = {}, ...engineOptions } = options;
  let set: { engine: TestEngine; runtime: LocalRuntime | undefined } | undefined;
  const fakes: FakeSource[] = [];
  const ready = () => {
    if (!set) throw new Error(`useEngineWithFakes('${hint}'): the engine is set up in beforeAll`);
    return set;
  };
  beforeAll(async () => {
    const engine = await setUpTestEngine(hint, engineOptions);
    const workerEnv = { ...workerProcessEnv(engine), ...engineOptions.env, ...runtimeOptions.workerEnv };
    const runtime =
      workers > 0 || (runtimeOptions.processWorkers ?? 0) > 0
        ? engine.runtime({ workers, reaperIntervalMs: 3_600_000, ...runtimeOptions, workerEnv }).start()
        : undefined;
    set = { engine, runtime };
  });
  afterAll(async () => {
    await set?.engine.stop();
    await Promise.all(fakes.map((f) => f.stop()));
  });
  const engine: TestEngine = {
    get aws() {
      return ready().engine.aws;
    },
    get deps() {
      return ready().engine.deps;
    },
    get faults() {
      return ready().engine.faults;
    },
    runtime: (options) => ready().engine.runtime(options),
    stop: () => ready().engine.stop(),
  };
  const runtime = () => {
    const started = ready().runtime;
    if (!started) throw new Error(`useEngineWithFakes('${hint}'): no runtime with workers: 0`);
    return started;
  };
  return {
    engine,
    runtime: {
      reapNow: () => runtime().reapNow(),
      workerPids: () => runtime().workerPids(),
      syncWorkerClocks: () => runtime().syncWorkerClocks(),
    },
    async startFake(fakeOptions) {
      const fake = await startFakeSource(fakeOptions);
      fakes.push(fake);
      return fake;
    },
    async runToEnd(sourceId, mode, timeoutMs = 120_000) {
      const started = await startRun(engine.deps, { sourceId, mode });
      return waitForRun(engine.deps, started.runId, undefined, timeoutMs);
    },
  };
}
