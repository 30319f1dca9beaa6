import { type ApiDeps, createApiDeps } from '../api/deps.js';
import { type AwsClients, createAwsClients, destroyAwsClients } from '../aws/clients.js';
import { endpointEnv, pickEndpointEnv, type ServiceEndpoints } from '../config/endpoints.js';
import { type HarvesterConfig, loadConfig } from '../config/env.js';
import { createEngineDeps } from '../engine/index.js';
import { createLogger } from '../observability/logger.js';
import { bootstrapResources, type ResolvedResources } from '../resources/bootstrap.js';
import { startDevServer } from './dev-server.js';
import type { DoorViolation } from './dynamo-door.js';
import { startEmulator } from './emulator.js';
import { LocalRuntime } from './runtime.js';

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Port of the admin API on 127.0.0.1. Default 0: a free port. */
  readonly apiPort?: number;
  /** Resource name prefix (tables `<prefix>-syncruns`, …). Default `harvester`. */
  readonly prefix?: string;
  /** In-process page workers. Default 2. */
  readonly workers?: number;
  /** Page workers as child processes (SIGKILL-able). Default 0. */
  readonly processWorkers?: number;
  /** Reaper cadence. Default 60 s, as in AWS. */
  readonly reaperIntervalMs?: number;
  /** Log level of the engine and API. Default `WARN`: a terminal shows problems, not every page. */
  readonly logLevel?: HarvesterConfig['logLevel'];
  /**
   * Environment to read `AWS_REGION` and the endpoints from (`AWS_ENDPOINT_URL`, the per-service
   * `AWS_ENDPOINT_URL_<SERVICE>`, `HARVESTER_LOCAL`). Default `process.env`.
   */
  readonly env?: NodeJS.ProcessEnv;
}

/** A running local Harvester: emulator, resources, workers, reaper, schedule firing and the API. */
export interface LocalStack {
  /** `http://127.0.0.1:<port>` of the admin API. */
  readonly apiUrl: string;
  /** The AWS endpoint of every service without its own (moto started here, or `AWS_ENDPOINT_URL`). */
  readonly endpoint: string;
  /** Each service's endpoint: `endpoint`, or its own `AWS_ENDPOINT_URL_<SERVICE>`. */
  readonly endpoints: ServiceEndpoints;
  readonly config: HarvesterConfig;
  readonly deps: ApiDeps;
  readonly runtime: LocalRuntime;
  readonly resources: ResolvedResources;
  readonly clients: AwsClients;
  /** Requests the emulator's DynamoDB door refused; undefined when no door stands there (an emulator not started here). */
  doorViolations(): readonly DoorViolation[] | undefined;
  /** Stops the API, the runtime, the clients and the emulator if this stack started it. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts Harvester locally: the emulator (moto, unless `AWS_ENDPOINT_URL` names
 * one; a service with its own `AWS_ENDPOINT_URL_<SERVICE>` goes there), its tables and queues, the local runtime, and the admin API on 127.0.0.1. The CLI's
 * `harvester local` and the demo run on it.
 *
 * @example
 * const stack = await startLocalStack({ apiPort: 8787 });
 * // … curl http://127.0.0.1:8787/sources …
 * await stack.stop();
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const env = options.env ?? process.env;
  const emulator = await startEmulator(env);
  const cleanups: (() => Promise<void> | void)[] = [() => emulator.stop()];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step();
  };
  try {
    const config = loadConfig({
      AWS_REGION: env.AWS_REGION ?? 'us-east-1',
      ...pickEndpointEnv(env),
      AWS_ENDPOINT_URL: emulator.endpoint,
      HARVESTER_PREFIX: options.prefix ?? 'harvester',
      LOG_LEVEL: options.logLevel ?? 'WARN',
      // The change feed, as the stack's setting turns it on (`CHANGE_FEED=true harvester local`).
      ...(env.CHANGE_FEED ? { CHANGE_FEED: env.CHANGE_FEED } : {}),
      ...(env.CHANGE_FEED_INCLUDES_DATA ? { CHANGE_FEED_INCLUDES_DATA: env.CHANGE_FEED_INCLUDES_DATA } : {}),
    });
    const clients = createAwsClients({
      region: config.region,
      endpoints: config.endpoints,
      local: config.local,
    });
    cleanups.push(() => destroyAwsClients(clients));
    const resources = await bootstrapResources(clients, config.names, {
      changeFeed: config.changeFeed.enabled,
    });
    const engine = createEngineDeps({
      config,
      clients,
      queues: resources,
      logger: createLogger(config.logLevel),
    });
    const deps = createApiDeps(engine, { config, scheduler: clients.scheduler });
    const runtime = new LocalRuntime({
      deps: engine,
      clients,
      resources,
      ...(options.workers === undefined ? {} : { workers: options.workers }),
      ...(options.processWorkers === undefined ? {} : { processWorkers: options.processWorkers }),
      ...(options.reaperIntervalMs === undefined ? {} : { reaperIntervalMs: options.reaperIntervalMs }),
      ...(config.changeFeed.enabled
        ? {
            changeFeed: {
              includeData: config.changeFeed.includeData,
              streamsEndpoint: env.AWS_ENDPOINT_URL_DYNAMODB_STREAMS,
            },
          }
        : {}),
      workerEnv: {
        ...endpointEnv(config),
        AWS_REGION: config.region,
        LOG_LEVEL: config.logLevel,
      },
    }).start();
    cleanups.push(() => runtime.stop());
    const server = await startDevServer({
      deps,
      ...(options.apiPort === undefined ? {} : { port: options.apiPort }),
    });
    cleanups.push(() => server.stop());
    let stopped: Promise<void> | undefined;
    return {
      apiUrl: server.url,
      endpoint: emulator.endpoint,
      endpoints: config.endpoints,
      config,
      deps,
      runtime,
      resources,
      clients,
      doorViolations: () => emulator.door?.violations(),
      stop: () => (stopped ??= cleanup()),
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
