import { type ChildProcess, spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { AwsClients } from '../aws/clients.js';
import type { EngineDeps } from '../engine/index.js';
import {
  drainDeadMessage,
  handlePageRecord,
  type ReapReport,
  reap,
  startScheduledRun,
} from '../engine/index.js';
import { LOCAL_START_RUN_ARN } from '../queue/source-schedules.js';
import type { ResolvedResources } from '../resources/bootstrap.js';

export { LOCAL_START_RUN_ARN } from '../queue/source-schedules.js';

import { pollChangeFeed } from './change-feed-poller.js';
import { WorkerClockLink } from './clock-link.js';
import type { MovableClock } from './movable-clock.js';
import { ScheduleFirer, type ScheduleTarget } from './schedule-firer.js';
import { pollQueue } from './sqs-poller.js';

/** Options of {@link LocalRuntime}. */
export interface LocalRuntimeOptions {
  readonly deps: EngineDeps;
  readonly clients: AwsClients;
  readonly resources: ResolvedResources;
  /** In-process page workers (pollers). Default 2. */
  readonly workers?: number;
  /** Page workers as child processes, which can really be SIGKILLed. Default 0. */
  readonly processWorkers?: number;
  /** Extra environment for worker processes (endpoint and names are passed automatically). */
  readonly workerEnv?: Record<string, string>;
  readonly batchSize?: number;
  /** Reaper cadence; AWS runs it every minute. */
  readonly reaperIntervalMs?: number;
  /** How often due schedules are looked for. */
  readonly scheduleIntervalMs?: number;
  readonly redeliveryDelay?: (receiveCount: number) => number;
  /**
   * The engine's clock when it is a movable one that worker processes must follow (the chaos
   * suite lets hours pass for a 429 storm): they start at its offset and follow every change.
   */
  readonly workerClock?: MovableClock;
  /**
   * Deliver the change feed (`Entity Changed` / `Entity Tombstoned` on the bus) from the Items
   * table's stream, as the stack's pipes do; the table needs its stream (bootstrap `changeFeed`).
   * Absent: off. `streamsEndpoint` (AWS_ENDPOINT_URL_DYNAMODB_STREAMS) defaults to the DynamoDB
   * endpoint; `streams` replaces the Streams client altogether (a test's, with its middleware).
   */
  readonly changeFeed?: {
    readonly includeData: boolean;
    readonly streamsEndpoint?: string | undefined;
    readonly streams?: DynamoDBStreamsClient;
  };
}

/**
 * The managed parts of AWS that an emulator does not play: Lambda's SQS event
 * source mappings for the page queue and its DLQ, the reaper's one-minute schedule, and
 * EventBridge Scheduler firing due schedules. It runs the same engine functions as the Lambda
 * handlers; it is not a second implementation of the worker.
 */
export class LocalRuntime {
  private readonly controller = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly children = new Set<ChildProcess>();
  private readonly clockLink: WorkerClockLink | undefined;
  readonly firer: ScheduleFirer;

  constructor(private readonly options: LocalRuntimeOptions) {
    const { deps, clients, resources } = options;
    const targets = new Map<string, ScheduleTarget>([
      [resources.pageQueueArn, async (input) => void (await deps.queue.send(JSON.parse(input)))],
      [LOCAL_START_RUN_ARN, async (input) => void (await startScheduledRun(deps, input))],
    ]);
    // Schedules fire on the engine's clock: a deferral is due when the engine's time says so.
    this.firer = new ScheduleFirer(
      clients.scheduler,
      resources.names.scheduleGroup,
      targets,
      deps.logger,
      () => deps.clock.now(),
    );
    this.clockLink = options.workerClock ? new WorkerClockLink(options.workerClock) : undefined;
  }

  /** Starts the pollers, worker processes, the reaper tick and the schedule firing. */
  start(): this {
    const { deps, clients, resources } = this.options;
    const signal = this.controller.signal;
    // Every in-flight SDK call listens on this one signal; many workers exceed Node's default of 10.
    setMaxListeners(1_000, signal);
    for (let i = 0; i < (this.options.workers ?? 2); i++) {
      this.loops.push(
        pollQueue({
          sqs: clients.sqs,
          queueUrl: resources.pageQueueUrl,
          handler: (m) => handlePageRecord(deps, m),
          logger: deps.logger,
          signal,
          batchSize: this.options.batchSize ?? 1,
          ...(this.options.redeliveryDelay ? { redeliveryDelay: this.options.redeliveryDelay } : {}),
        }),
      );
    }
    this.loops.push(
      pollQueue({
        sqs: clients.sqs,
        queueUrl: resources.pageDlqUrl,
        handler: (m) => drainDeadMessage(deps, m.body, m.receiveCount),
        logger: deps.logger,
        signal,
        batchSize: 5,
      }),
    );
    if (this.options.changeFeed)
      this.loops.push(
        pollChangeFeed({
          clients,
          itemsTable: deps.items.tableName,
          eventBus: deps.events.busName,
          includeData: this.options.changeFeed.includeData,
          streamsEndpoint: this.options.changeFeed.streamsEndpoint,
          ...(this.options.changeFeed.streams ? { streams: this.options.changeFeed.streams } : {}),
          logger: deps.logger,
          signal,
        }).catch((error: unknown) => deps.logger.error('change feed stopped', { error: String(error) })),
      );
    for (let i = 0; i < (this.options.processWorkers ?? 0); i++) this.spawnWorker();
    this.every(this.options.reaperIntervalMs ?? 60_000, () => this.reapNow());
    this.every(this.options.scheduleIntervalMs ?? 1_000, () => this.firer.tick());
    return this;
  }

  /** Runs one reaper pass now. */
  reapNow(): Promise<ReapReport> {
    return reap(this.options.deps);
  }

  /** Resolves once every worker process follows the engine's clock (immediately without `workerClock`). */
  async syncWorkerClocks(): Promise<void> {
    await this.clockLink?.sync();
  }

  /** PIDs of the live worker processes (the demo and the chaos suite SIGKILL them). */
  workerPids(): number[] {
    return [...this.children].map((c) => c.pid!).filter(Boolean);
  }

  /** Stops everything this runtime started and waits for in-flight work to settle. */
  async stop(): Promise<void> {
    this.controller.abort();
    this.clockLink?.close();
    for (const timer of this.timers) clearInterval(timer);
    const exits = [...this.children].map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of this.children) child.kill('SIGTERM');
    await Promise.all([...this.loops, ...exits]);
  }

  private every(intervalMs: number, work: () => Promise<unknown>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running || this.controller.signal.aborted) return;
      running = true;
      work()
        .catch((error: unknown) =>
          this.options.deps.logger.error('local runtime task failed', { error: String(error) }),
        )
        .finally(() => {
          running = false;
        });
    }, intervalMs);
    this.timers.push(timer);
  }

  private spawnWorker(): void {
    const { resources } = this.options;
    const link = this.clockLink;
    const child = spawn(process.execPath, workerProcessArgs(), {
      // An IPC channel only when the worker must follow the engine's clock.
      stdio: link ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        ...this.options.workerEnv,
        ...link?.env(),
        PAGE_QUEUE_URL: resources.pageQueueUrl,
        PAGE_QUEUE_ARN: resources.pageQueueArn,
        SYNC_RUNS_TABLE: resources.names.syncRunsTable,
        SOURCES_TABLE: resources.names.sourcesTable,
        DEAD_LETTERS_TABLE: resources.names.deadLettersTable,
        ITEMS_TABLE: resources.names.itemsTable,
        RATE_BUDGETS_TABLE: resources.names.rateBudgetsTable,
        EVENT_BUS_NAME: resources.names.eventBus,
        SCHEDULE_GROUP: resources.names.scheduleGroup,
      },
    });
    this.children.add(child);
    link?.attach(child);
    child.once('exit', () => {
      this.children.delete(child);
      // Like Lambda, a dead worker is replaced by a fresh one; its in-flight message is not.
      if (!this.controller.signal.aborted) this.spawnWorker();
    });
  }
}

/**
 * Node's arguments for a worker process: the TypeScript loader and the worker's entry, both as
 * absolute paths. A bare `--import tsx` is resolved from the working directory, so
 * `harvester local --process-workers 1` started outside the repository would fail to start any.
 */
export function workerProcessArgs(): string[] {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', loader, fileURLToPath(new URL('./worker-main.ts', import.meta.url))];
}
