/**
 * The SyncRun model: the single source of truth the UI reads (DESIGN §3). Pure types, no AWS.
 */

export const RUN_MODES = ['full', 'incremental', 'reconciliation', 'dlq_retry'] as const;
export type RunMode = (typeof RUN_MODES)[number];

export const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];

/** States in which a run still holds its source's lock and is watched by the reaper. */
export const ACTIVE_STATES = ['queued', 'running'] as const satisfies readonly RunState[];
export const TERMINAL_STATES = ['succeeded', 'failed', 'cancelled'] as const satisfies readonly RunState[];

/** Why a run started where it did (DESIGN §4.7). Every start, resume and restart records one. */
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

/** Position after the last complete page. Only a page commit writes it (DESIGN §4.3). */
export interface Checkpoint {
  /** Cursor of the page to fetch next; null when the stream ended. */
  readonly cursor: string | null;
  /** Sequence number of the last committed page. */
  readonly page: number;
  /** Highest modification time seen so far (incremental runs move the source watermark to it on success). */
  readonly watermark: string | null;
  /** Epoch milliseconds of the commit. */
  readonly at: number;
}

/**
 * The expected page handed to the queue and not yet claimed by a worker (DESIGN §4.10). Written
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
}

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
  readonly resume: ResumeRecord;
  readonly failure: RunFailure | null;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  readonly updatedAt: number;
}

export function isTerminal(state: RunState): boolean {
  return (TERMINAL_STATES as readonly RunState[]).includes(state);
}

export function isActive(state: RunState): boolean {
  return (ACTIVE_STATES as readonly RunState[]).includes(state);
}
