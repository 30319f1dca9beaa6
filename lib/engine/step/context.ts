import type { Connector } from '../../connectors/contract.js';
import type { SecretScrubber } from '../../connectors/secret-scrub.js';
import type { HarvesterLogger } from '../../observability/logger.js';
import { METRIC } from '../../observability/metrics.js';
import type { PageMessage } from '../../queue/page-message.js';
import type { Partition, SyncRun } from '../../run/model.js';
import type { RunParams } from '../../run/params.js';
import type { EngineDeps, StepPoint } from '../deps.js';
import type { Heartbeat } from './heartbeat.js';

/*
 * The shared vocabulary of one page step. The step (page-step.ts) and the work it dispatches to
 * (work/page-work.ts, work/dead-letter-retry.ts) all import from here, so the arrows between
 * them point one way.
 */

/** What became of one page message. */
export type StepResult =
  | { readonly outcome: 'dropped'; readonly reason: string }
  | {
      readonly outcome: 'committed';
      /** `partition_done`: the partition read its window to the end; other partitions still run. */
      readonly next: 'enqueued' | 'finished' | 'partition_done';
    }
  | { readonly outcome: 'deferred'; readonly until: number }
  | { readonly outcome: 'stopped'; readonly reason: string }
  | { readonly outcome: 'failed'; readonly reason: string }
  | { readonly outcome: 'restarted'; readonly reason: string };

/** Everything one page step works with, resolved once. */
export interface StepContext {
  readonly deps: EngineDeps;
  readonly run: SyncRun;
  readonly params: RunParams;
  readonly message: PageMessage;
  /** The partition the message belongs to, as read at the step's start; undefined: the run's own chain. */
  readonly partition: Partition | undefined;
  readonly connector: Connector<unknown>;
  readonly config: unknown;
  readonly heartbeat: Heartbeat;
  /** The log, scrubbed of every secret resolved in the step. */
  readonly log: HarvesterLogger;
  /**
   * Every secret value the step resolved (and every header that carried one): what leaves a fetch
   * passes through it before it is stored, shown or logged.
   */
  readonly scrubber: SecretScrubber;
  /** Runs the test hook at a step point, then stops if the run was lost meanwhile. */
  checkpointHook(point: StepPoint): Promise<void>;
  /** Throws the heartbeat's refusal (fenced, cancelled) if a beat learned the run is no longer ours. */
  ensureOwned(): void;
}

/** A commit refused because another delivery of the same page committed it first: drop this copy. */
export function droppedAsDuplicate(context: Pick<StepContext, 'deps' | 'log'>, note: string): StepResult {
  context.log.info(note);
  context.deps.metrics.count(METRIC.droppedMessages, 1, { name: 'Reason', value: 'duplicate_page' });
  return { outcome: 'dropped', reason: 'duplicate_page' };
}
