import { randomBytes } from 'node:crypto';
import { type AwsClients, createAwsClients, destroyAwsClients } from '../lib/aws/clients.js';
import { loadConfig, resourceNamesFor } from '../lib/config/env.js';
import type { SecretResolver } from '../lib/connectors/contract.js';
import type { Clock, EngineDeps } from '../lib/engine/index.js';
import { createEngineDeps } from '../lib/engine/index.js';
import { LocalRuntime, type LocalRuntimeOptions } from '../lib/local/runtime.js';
import { bootstrapResources, type ResolvedResources } from '../lib/resources/bootstrap.js';
import { stableHash } from '../lib/run/hash.js';
import { isTerminal, type SyncRun } from '../lib/run/model.js';
import { fakeRestConfig } from '../tools/fake-source/connector-config.js';
import type { RequestCounter } from './counter.js';

/**
 * Start options of the phases that measure one ordered stream (pipeline, kill, memory): a bound
 * of one partition, so the engine never splits their runs (the `partitioned` phase measures that).
 */
export const ONE_STREAM = { partitions: 1 } as const;

/** The region every benchmark phase uses (the prices are us-east-1's). */
export const BENCH_REGION = 'us-east-1';

/**
 * One benchmark phase's wiring: its own uniquely prefixed tables and queues, an engine whose
 * clients are metered as `engine`, runtime clients metered as `esm` (the pollers play Lambda's
 * event source mapping), and an unmetered `observer` engine for the benchmark's own reads, so
 * watching a run never counts as the run's cost.
 */
export interface BenchEnv {
  readonly endpoint: string;
  readonly prefix: string;
  readonly resources: ResolvedResources;
  readonly deps: EngineDeps;
  readonly observer: EngineDeps;
  /** Environment for child worker processes (they create their own, unmetered clients). */
  readonly workerEnv: Record<string, string>;
  runtime(options: Partial<Omit<LocalRuntimeOptions, 'deps' | 'clients' | 'resources'>>): LocalRuntime;
  /** Stops the runtimes created here and closes every client. */
  stop(): Promise<void>;
}

/** Sets up one phase on the emulator at `endpoint`. */
export async function setUpBench(
  endpoint: string,
  hint: string,
  options: {
    counter?: RequestCounter;
    clock?: Clock;
    /** Extra engine environment (`SHARED_SECRET_REFS`, …). */
    env?: Record<string, string>;
    /** Resolves secret references (a phase whose sources carry tokens). */
    secrets?: SecretResolver;
  } = {},
): Promise<BenchEnv> {
  const prefix = `bench-${hint}-${randomBytes(3).toString('hex')}`;
  const metered = (caller: 'engine' | 'esm') =>
    createAwsClients({
      region: BENCH_REGION,
      endpoint,
      middleware: options.counter ? [options.counter.plugin(caller)] : [],
    });
  const engineClients = metered('engine');
  const runtimeClients = metered('esm');
  const observerClients = createAwsClients({ region: BENCH_REGION, endpoint });
  const resources = await bootstrapResources(observerClients, resourceNamesFor(prefix));
  const config = loadConfig({
    AWS_REGION: BENCH_REGION,
    AWS_ENDPOINT_URL: endpoint,
    HARVESTER_PREFIX: prefix,
    LOG_LEVEL: 'SILENT',
    ...options.env,
  });
  const wire = (clients: AwsClients) =>
    createEngineDeps({
      config,
      clients,
      queues: { pageQueueUrl: resources.pageQueueUrl, pageQueueArn: resources.pageQueueArn },
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
      // A development knob (bench/run.ts refuses it outside a partial run).
      ...(process.env.BENCH_BUDGETS === 'off' ? { rateBudgets: false } : {}),
    });
  const runtimes: LocalRuntime[] = [];
  const deps = wire(engineClients);
  return {
    endpoint,
    prefix,
    resources,
    deps,
    observer: wire(observerClients),
    workerEnv: {
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: BENCH_REGION,
      HARVESTER_PREFIX: prefix,
      LOG_LEVEL: 'SILENT',
    },
    runtime(runtimeOptions) {
      const runtime = new LocalRuntime({
        deps,
        clients: runtimeClients,
        resources,
        // The reaper is measured on its own (kill phase); elsewhere it would only add noise.
        reaperIntervalMs: 3_600_000,
        ...runtimeOptions,
      });
      runtimes.push(runtime);
      return runtime;
    },
    async stop() {
      await Promise.all(runtimes.map((r) => r.stop()));
      for (const clients of [engineClients, runtimeClients, observerClients]) destroyAwsClients(clients);
    },
  };
}

export { type MovableClock, movableClock } from '../lib/local/movable-clock.js';
export { fakeRestConfig } from '../tools/fake-source/connector-config.js';

/** Registers a rest-json source directly in the store (the admin API's job in production). */
export async function putSource(deps: EngineDeps, sourceId: string, baseUrl: string): Promise<void> {
  const config = fakeRestConfig(baseUrl);
  const connector = 'rest-json';
  await deps.sources.put(
    { sourceId, connector, config, schedules: [], configHash: stableHash({ connector, config }) },
    Date.now(),
  );
}

/** Polls a run (every `everyMs`) until `until` holds — by default until it is terminal. */
export async function waitForRun(
  deps: EngineDeps,
  runId: string,
  options: { until?: (run: SyncRun) => boolean; timeoutMs?: number; everyMs?: number } = {},
): Promise<SyncRun> {
  const until = options.until ?? ((run: SyncRun) => isTerminal(run.state));
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  for (;;) {
    const run = await deps.runs.require(runId);
    if (until(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} timed out: ${JSON.stringify(run)}`);
    await sleep(options.everyMs ?? 250);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Seconds since `startedMs` (a `performance.now()` value), rounded to ms. */
export function secondsSince(startedMs: number): number {
  return round((performance.now() - startedMs) / 1_000, 3);
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
