import { afterAll, beforeAll } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.js';
import { DynamoFaults } from '../../lib/aws/dynamo-faults.js';
import type { Entity } from '../../lib/connectors/contract.js';
import type { EngineDeps } from '../../lib/engine/index.js';
import { type MovableClock, movableClock } from '../../lib/local/movable-clock.js';
import { LocalRuntime } from '../../lib/local/runtime.js';
import { TEST_REGION } from '../support/aws.js';
import { fastRetry, type TestEngine, useEngineWithFakes, workerProcessEnv } from '../support/harness.js';
import { ChaosQueue } from './chaos-queue.js';
import { ChaosHooks } from './hooks.js';
import { InProcessWorkers } from './workers.js';

/** A movable clock that a trial can also put back: each trial starts at real time. */
export type ChaosClock = MovableClock;

/**
 * Highest version each entity was loaded with by an in-process worker (zombies included): what
 * the run "saw". The stored version may never be older.
 */
export class SeenVersions {
  private readonly seen = new Map<string, string>();

  record(sourceId: string, entities: readonly Entity[]): void {
    for (const entity of entities) {
      const key = `${sourceId}/${entity.id}`;
      const before = this.seen.get(key);
      if (before === undefined || before < entity.version) this.seen.set(key, entity.version);
    }
  }

  of(sourceId: string): Map<string, string> {
    const prefix = `${sourceId}/`;
    return new Map(
      [...this.seen]
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, v]) => [key.slice(prefix.length), v]),
    );
  }
}

/** Everything the trials share: one set of tables and queues, the workers, the reaper, the fault switches. */
export interface ChaosEnv {
  readonly engine: TestEngine;
  /** The engine as the in-process workers, the reaper and the tests see it: faulty queue, hooks, recorded loads. */
  readonly deps: EngineDeps;
  readonly clock: ChaosClock;
  readonly hooks: ChaosHooks;
  readonly queue: ChaosQueue;
  readonly seen: SeenVersions;
  readonly workers: InProcessWorkers;
  /** The reaper (ticked by hand), the page DLQ drain, and one worker process that can be SIGKILLed. */
  readonly runtime: LocalRuntime;
  /** The DynamoDB fault layer on the engine's clients (inert until a trial arms it, see dynamo-trial-faults.ts). */
  readonly faults: DynamoFaults;
}

/** In-process pollers; a worker process polls the same queue. */
const IN_PROCESS_WORKERS = 2;
/** Frequent beats keep a working run visibly alive to the stall oracle. */
const HEARTBEAT_MS = 500;
/** Due deferral schedules are found within this long (the supervisor moves the clock to a wake-up). */
const SCHEDULE_TICK_MS = 200;
/** The runtime's own reaper timer never fires during a suite (the trials tick the reaper themselves). */
const NEVER_MS = 2_000_000_000;

/**
 * The chaos suite's environment, set up once for the file that calls it (at its top level):
 * the engine on the file's resources with no runtime of its own (`useEngineWithFakes` with no
 * workers), then the engine as the trials see it — faulty queue, hooks, recorded loads — with
 * two in-process pollers over it and a runtime that runs one worker process, the page DLQ drain
 * and the due schedules. Read the returned getter inside hooks and tests.
 */
export function useChaosEnv(): () => ChaosEnv {
  const clock = movableClock();
  const hooks = new ChaosHooks();
  // Runs are read as one stream unless a trial asks for partitions (the partition trials); a
  // partition is worth it from 20 entities, so the trials' small sources can be split.
  const partitionEnv = { MAX_PARTITIONS_PER_RUN: '1', MIN_ENTITIES_PER_PARTITION: '20' };
  const { engine } = useEngineWithFakes('chaos', {
    workers: 0,
    clock,
    hooks,
    heartbeatIntervalMs: HEARTBEAT_MS,
    env: partitionEnv,
    // Waits the source asks for are measured on the trial's clock, and every deferral becomes a
    // schedule that the runtime fires on that clock: a 429 storm of hours fits a trial.
    retry: { ...fastRetry(), now: () => clock.now() },
    maxQueueDelayMs: 0,
  });
  let env: ChaosEnv | undefined;
  const faults = new DynamoFaults({ seed: 0 });
  let outOfBand: ReturnType<typeof createAwsClients> | undefined;
  beforeAll(() => {
    // On the engine's own DynamoDB client (and so its document client), for the in-process
    // workers, the reaper and the trials alike; the layer reads earlier states out of band.
    outOfBand = createAwsClients({ region: TEST_REGION, endpoint: engine.aws.endpoint });
    faults.install(engine.aws.clients.dynamo, outOfBand.dynamo);
    const queue = new ChaosQueue(engine.deps.queue);
    const seen = new SeenVersions();
    const items = Object.create(engine.deps.items) as EngineDeps['items'];
    items.loadAll = (sourceId, entities, ...rest) => {
      seen.record(sourceId, entities);
      return engine.deps.items.loadAll(sourceId, entities, ...rest);
    };
    const deps: EngineDeps = { ...engine.deps, queue: queue.queue, items };
    const { clients, resources } = engine.aws;
    const workers = new InProcessWorkers(deps, clients.sqs, resources.pageQueueUrl).start(IN_PROCESS_WORKERS);
    const runtime = new LocalRuntime({
      deps,
      clients,
      resources,
      workers: 0,
      processWorkers: 1,
      reaperIntervalMs: NEVER_MS,
      scheduleIntervalMs: SCHEDULE_TICK_MS,
      redeliveryDelay: () => 1,
      // The worker process lives on the trial's clock too.
      workerClock: clock,
      workerEnv: { ...workerProcessEnv(engine), ...partitionEnv },
    }).start();
    env = { engine, deps, clock, hooks, queue, seen, workers, runtime, faults };
  });
  // Registered after the engine's: runs first, so the pollers and the worker process stop before the engine's clients close.
  afterAll(async () => {
    if (env) await Promise.all([env.workers.stop(), env.runtime.stop()]);
    if (outOfBand) destroyAwsClients(outOfBand);
  });
  return () => {
    if (!env) throw new Error('useChaosEnv(): the environment is set up in beforeAll');
    return env;
  };
}
