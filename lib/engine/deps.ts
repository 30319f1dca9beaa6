import type { Connector, ConnectorAwsClients, SecretResolver } from '../connectors/contract.js';
import type { SourcePolicy } from '../connectors/url-policy.js';
import type { HarvesterLogger } from '../observability/logger.js';
import type { EngineMetrics } from '../observability/metrics.js';
import type { PageQueue } from '../queue/page-queue.js';
import type { RetryDeps } from '../retry/outcome.js';
import type { ChainStore } from '../store/chains.js';
import type { DeadLetterStore } from '../store/dead-letters.js';
import type { ItemCounts } from '../store/item-counts.js';
import type { ItemListing } from '../store/item-listing.js';
import type { ItemStore } from '../store/items.js';
import type { RunLifecycle } from '../store/lifecycle.js';
import type { PositionStore } from '../store/positions.js';
import type { RateBudgetStore } from '../store/rate-budgets.js';
import type { RunEventLog } from '../store/run-event-log.js';
import type { SecretBindingStore } from '../store/secret-bindings.js';
import type { SeenIndex } from '../store/seen-index.js';
import type { SeenPageStore } from '../store/seen-pages.js';
import type { SourceTestLeases } from '../store/source-test-leases.js';
import type { SourceStore } from '../store/sources.js';
import type { SyncRunStore } from '../store/sync-runs.js';
import type { RunEvents } from './run/events.js';
import type { ConfigTrust } from './sources/config-trust.js';

/** The engine's time source, injected so tests can let hours pass. */
export interface Clock {
  now(): number;
}

/** Looks connectors up by name. */
export interface ConnectorLookup {
  get(name: string): Connector<unknown>;
}

/** Points in the page step where tests (and the chaos suite) can simulate a crash or a pause. */
export const STEP_POINTS = ['beforeFetch', 'afterLoad', 'afterCommit'] as const;
export type StepPoint = (typeof STEP_POINTS)[number];

/** Test-only hooks; production passes none. */
export interface EngineHooks {
  /** Called at each step point; may throw {@link SimulatedCrashError} or wait (a zombie pause). */
  at?(
    point: StepPoint,
    context: { runId: string; epoch: number; page: number; partition?: number },
  ): Promise<void> | void;
}

/** Thrown by a hook to simulate the worker dying at that point: the runtime treats the message as lost in flight. */
export class SimulatedCrashError extends Error {
  override readonly name = 'SimulatedCrashError';
}

/** Everything the engine talks to: the ports of STYLE.md, passed in, never module statics. */
export interface EngineDeps {
  readonly runs: SyncRunStore;
  /** The page chains of every run: its own and its partitions', each on its own item. */
  readonly chains: ChainStore;
  /** Positions too large to travel on a message, stored by reference (lib/engine/chain/positions.ts). */
  readonly positions: PositionStore;
  /** What each page of a reconciliation listed, and its merge by key for the tombstone pass. */
  readonly seen: { readonly pages: SeenPageStore; readonly index: SeenIndex };
  readonly sources: SourceStore;
  readonly lifecycle: RunLifecycle;
  /** Each run's story: the append-only record of its transitions (lib/engine/run/story.ts). */
  readonly story: RunEventLog;
  readonly deadLetters: DeadLetterStore;
  readonly items: ItemStore;
  /** Counts of a source's stored items (a run's completeness check). */
  readonly itemCounts: ItemCounts;
  /** Page-by-page reads of stored items (the items API, the CLI, exports). */
  readonly itemListing: ItemListing;
  /** Rate budgets per credential; absent: source requests are not budgeted. */
  readonly budgets?: RateBudgetStore;
  /** Slots of the API's connection checks per source (same table); absent: checks are not counted. */
  readonly sourceTestLeases?: SourceTestLeases;
  readonly queue: PageQueue;
  readonly events: RunEvents;
  readonly connectors: ConnectorLookup;
  /**
   * The secrets one source may use: its own `harvester/<sourceId>/…` and the stack's shared ones
   * (lib/connectors/secret-binding.ts). There is deliberately no unbound resolver here, so no
   * connector call can be handed another source's secret.
   */
  secretsFor(sourceId: string): SecretResolver;
  /** Where each source's own secrets may be sent (written by the API only). */
  readonly secretBindings: SecretBindingStore;
  /** Signs (API) and verifies (workers) source configs and secret bindings. */
  readonly trust: ConfigTrust;
  /** The stack's source posture (where sources may point, which secrets are shared). */
  readonly sourcePolicy: SourcePolicy;
  readonly fetch: typeof fetch;
  /** SDK clients handed to AWS-service connectors (`s3-objects`); absent: such sources cannot be read. */
  readonly connectorAws?: ConnectorAwsClients;
  readonly clock: Clock;
  readonly retry: RetryDeps;
  readonly logger: HarvesterLogger;
  readonly metrics: EngineMetrics;
  readonly limits: {
    readonly maxPagesPerRun: number;
    readonly heartbeatIntervalMs: number;
    /** Requests in flight per credential, across every worker (`MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL`); 0: no cap. */
    readonly maxConcurrentRequestsPerCredential?: number;
    /** Longest rate-budget wait slept in the invocation; longer ones defer. Default `RELIABILITY.maxInlineBudgetWaitMs`. */
    readonly maxInlineBudgetWaitMs?: number;
    /** How far before the watermark an incremental run asks from (`WATERMARK_LOOKBACK_SECONDS`). */
    readonly watermarkLookbackMs: number;
    /** Default bound on a run's partitions (`MAX_PARTITIONS_PER_RUN`); 1: never split. */
    readonly maxPartitions: number;
    /** Most partitions any run is split into: its source's share of the workers (`MAX_WORKERS_PER_SOURCE`). */
    readonly maxWorkersPerSource?: number;
    /** Fewest entities worth a partition (`MIN_ENTITIES_PER_PARTITION`). */
    readonly minEntitiesPerPartition: number;
  };
  readonly hooks?: EngineHooks;
}
