/**
 * The SyncRun model: the single source of truth the UI reads. Pure types, no AWS.
 */

import type { Completeness } from './completeness.js';
import type { CycleWatch } from './cursor-cycle.js';

export const RUN_MODES = ['full', 'incremental', 'reconciliation', 'dlq_retry'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/**
 * The epoch a run starts at. While a run is still at it, no earlier worker of the run can exist
 * to be fenced, so a page may skip an entity it found stored unchanged (see `ItemStore.loadAll`).
 */
export const FIRST_EPOCH = 1;

export const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];

/** States in which a run still holds its source's lock and is watched by the reaper. */
export const ACTIVE_STATES = ['queued', 'running'] as const satisfies readonly RunState[];
export const TERMINAL_STATES = ['succeeded', 'failed', 'cancelled'] as const satisfies readonly RunState[];

/** Why a run started where it did. Every start, resume and restart records one. */
export const RESUME_VERDICTS = [
  'fresh_start',
  'resumed',
  'checkpoint_stale',
  'params_changed',
  'mode_not_resumable',
  'stream_unordered',
  'no_checkpoint',
  'restart_limit',
] as const;
export type ResumeVerdict = (typeof RESUME_VERDICTS)[number];

/** Where the run continues after a verdict: from its checkpoint, or from the first page. */
export type ResumeFrom = 'checkpoint' | 'scratch' | 'none';

export interface ResumeRecord {
  readonly reason: ResumeVerdict;
  readonly from: ResumeFrom;
  /** Epoch milliseconds. */
  readonly at: number;
}

/** Position after the last complete page. Only a page commit writes it. */
export interface Checkpoint {
  /** Cursor of the page to fetch next; null when the stream ended. */
  readonly cursor: string | null;
  /** Sequence number of the last committed page. */
  readonly page: number;
  /** Highest modification time seen so far (incremental runs move the source watermark to it on success). */
  readonly watermark: string | null;
  /** The chain's watch for cursor cycles (`cursor-cycle.ts`); absent on a chain's first page. */
  readonly cycle?: CycleWatch;
  /** Pages in a row up to this one that failed for good and were skipped; absent: none. */
  readonly failedInRow?: number;
  /** Epoch milliseconds of the commit. */
  readonly at: number;
}

/**
 * The expected page handed to the queue and not yet claimed by a worker. Written
 * with the write that makes the page due (run creation, page commit, deferral, fence); `sentAt`
 * is set once the message is known to be on the queue (or on a deferral schedule); the worker
 * that takes the page removes it with its first heartbeat. While it is there, silence means the
 * page is waiting, not that a worker died.
 */
export interface Handoff {
  /** The page handed over; equals the run's `nextPage` while it is current. */
  readonly page: number;
  /** Epoch milliseconds when the page was committed to the queue's care. */
  readonly at: number;
  /** Epoch milliseconds when the send was confirmed; null while it may have been lost. */
  readonly sentAt: number | null;
  /** Set when the worker that handed the page over saw its send fail: a redelivery re-sends it. */
  readonly failedAt?: number;
}

export interface Progress {
  readonly processed: number;
  /** Total entities when the source tells, else null. */
  readonly total: number | null;
  readonly pages: number;
  /**
   * Reconciliation runs: stored items tombstoned (absence confirmed at the source), counted across
   * restarts (a restarted pass skips what is already tombstoned). Absent until one is.
   */
  readonly tombstoned?: number;
  /**
   * Retry-failed runs: dead letters resolved because their entity is gone from the source (404/410,
   * or answered with another record), nothing stored. Absent until one is.
   */
  readonly gone?: number;
  /**
   * Records read with a modification time past the run's clock (see `engine/run/watermark.ts`):
   * stored, never the watermark. Absent until one is.
   */
  readonly ahead?: number;
}

/**
 * What a run ended with, written by the very write that ends it and never computed again: the
 * run's history (its view, the CLI's lines, `sources get`) reads these figures, while what has
 * become of its dead letters since is shown beside them as a live count.
 */
export interface RunOutcome {
  /** Entities stored (the run's `progress.processed` when it ended). */
  readonly processed: number;
  /** Failures its page commits recorded (its `errorCount` when it ended). */
  readonly failed: number;
  /** Dead letters the run filed: the entries whose last failure was this run when it ended. */
  readonly deadLetters: number;
  /** The source's own total, when it stated one (a listing's `total`); never the run's own count. */
  readonly total: number | null;
}

/** Why a dead-letter retry run ended `failed` although every page of it committed: nothing came of it. */
export const RETRY_FIXED_NOTHING = 'retry_fixed_nothing';

export interface RunFailure {
  readonly reason: string;
  readonly message: string;
}

/**
 * Who started a run: `api` (a direct API call), `cli` (the harvester CLI), `schedule:<name>` (a
 * source schedule). The reaper never starts a run; it re-arms one, and says so in `resume`.
 */
export type RunTrigger = 'api' | 'cli' | `schedule:${string}`;

export interface SyncRun {
  readonly runId: string;
  readonly sourceId: string;
  readonly mode: RunMode;
  readonly trigger: RunTrigger;
  readonly params: Record<string, unknown>;
  readonly paramsHash: string;
  readonly state: RunState;
  /** Fencing token: every (re)start bumps it; writes carrying an older epoch fail. */
  readonly epoch: number;
  /** Sequence number of the page expected next. */
  readonly nextPage: number;
  readonly checkpoint: Checkpoint | null;
  readonly progress: Progress;
  /** Entries this run put in dead_letters. */
  readonly errorCount: number;
  /** Epoch milliseconds of the last sign of life. */
  readonly heartbeatAt: number;
  /** A planned pause: the reaper leaves the run alone until then. Epoch milliseconds. */
  readonly deferredUntil: number | null;
  /** The expected page as handed to the queue and not yet claimed; null while a worker holds it. */
  readonly handoff: Handoff | null;
  /** Set when the run ended, until its outcome event is confirmed published (the outbox). */
  readonly outboxAt: number | null;
  readonly restarts: number;
  /**
   * Whether the run's source may hold open item dead letters: its source had some when the run
   * started, or the run filed one. Only then does a page look for entries its loads resolve.
   * Undefined for a run stored before the flag existed: assumed so.
   */
  readonly itemDeadLetters?: boolean;
  readonly resume: ResumeRecord;
  readonly failure: RunFailure | null;
  /** Fixed when the run ended; absent while it is active, and on runs that ended before outcomes were kept. */
  readonly outcome?: RunOutcome;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  readonly updatedAt: number;
  /**
   * A partitioned run's partitions, by index (see `lib/run/partitions.ts`): each reads one window
   * of modification time with its own page chain, checkpoint, handoff and heartbeat. Absent on a
   * run read as one stream; the run-level fields then hold the one chain, as always.
   */
  readonly partitions?: Readonly<Record<string, Partition>>;
  /** Partitions not done yet; the commit that takes it to 0 ends the run. Absent when not partitioned. */
  readonly openPartitions?: number;
  /**
   * Set on a run stored by an earlier version, with its page chains inside the run item: it is
   * readable, but no worker continues it (an active one is ended failed, `chains_inline`).
   */
  readonly inlineChains?: true;
  /** A full or reconciliation run's completeness check, written once when it ended succeeded. */
  readonly completeness?: Completeness;
}

/**
 * `running`: its chain has a page due or in work. `idle`: the open last window read to the end of
 * the stream while other windows were still being read; it reads once more from where it stopped
 * (a tail pass) when they are all done, so entities edited during the run are read by it. `done`.
 */
export const PARTITION_STATES = ['running', 'idle', 'done'] as const;
export type PartitionState = (typeof PARTITION_STATES)[number];

/**
 * One partition of a partitioned run: a keyset stream over one window `[from, until)` of
 * modification time. Its fields mean what the run-level ones mean for an unpartitioned run, for
 * its own chain; the run's progress and error count are the sums over its partitions.
 */
export interface Partition {
  readonly index: number;
  readonly window: { readonly from: string | null; readonly until: string | null };
  readonly state: PartitionState;
  /** Sequence number of the partition's page expected next (its chain starts at 1). */
  readonly nextPage: number;
  readonly checkpoint: Checkpoint | null;
  readonly handoff: Handoff | null;
  readonly heartbeatAt: number;
  readonly deferredUntil: number | null;
  readonly processed: number;
  readonly pages: number;
  readonly errorCount: number;
  /**
   * The lowest watermark ceiling a page of this partition reported (a tie group read by
   * position): the run's watermark must not pass it. Null: none.
   */
  readonly ceiling: string | null;
  /** The latest version this partition read, and the ids read at it (a tail pass skips them). */
  readonly latest: string | null;
  readonly latestIds: readonly string[];
  /** The open window's tail pass reads from here (its latest version when the pass began); null: none. */
  readonly tailFrom: string | null;
}

export function isTerminal(state: RunState): boolean {
  return (TERMINAL_STATES as readonly RunState[]).includes(state);
}

export function isActive(state: RunState): boolean {
  return (ACTIVE_STATES as readonly RunState[]).includes(state);
}
