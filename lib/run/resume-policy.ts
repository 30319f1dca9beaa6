import { RELIABILITY } from '../config/constants.js';
import type { ResumeVerdict, SyncRun } from './model.js';
import { isPartitioned } from './partitions.js';
import { lastProgressAt } from './silence.js';

/** What the reaper does with a run one of whose chains' workers went silent. */
export type ResumeDecision =
  | { readonly action: 'resume'; readonly verdict: 'resumed' }
  | {
      readonly action: 'restart';
      readonly verdict: Extract<
        ResumeVerdict,
        'checkpoint_stale' | 'params_changed' | 'mode_not_resumable' | 'stream_unordered' | 'no_checkpoint'
      >;
    }
  | { readonly action: 'fail'; readonly verdict: 'restart_limit' };

/** The run as the decision reads it. */
export type ResumableRun = Pick<
  SyncRun,
  'mode' | 'checkpoint' | 'restarts' | 'paramsHash' | 'state' | 'nextPage' | 'partitions'
> &
  Partial<Pick<SyncRun, 'startedAt' | 'createdAt' | 'resume'>>;

/** Everything the decision depends on; no I/O. */
export interface ResumeInput {
  readonly run: ResumableRun;
  /** Whether the stream (for the source's current config) has a stable position: ordered by modification time with a keyset position, or by an immutable key. */
  readonly orderedByModifiedTime: boolean;
  /** The params hash the run would have if it started now (detects reconfiguration). */
  readonly currentParamsHash: string;
  readonly now: number;
  readonly maxRestarts?: number;
  readonly freshnessMs?: number;
}

/** Modes whose runs continue from their position: they only load what they read, and tombstone nothing. */
const RESUMABLE_MODES: readonly string[] = ['incremental', 'full'];

/**
 * When the position the run would continue from was written, or null when it has none. A run
 * read as one stream has a position once a page is committed: its checkpoint. A partitioned
 * run's plan is a position already — every partition continues from its own checkpoint, or from
 * its window's start — written when the run was planned or last committed a page.
 */
export function positionAt(run: ResumableRun): number | null {
  if (isPartitioned(run)) {
    return lastProgressAt({
      startedAt: null,
      createdAt: 0,
      resume: { reason: 'resumed', from: 'checkpoint', at: 0 },
      ...run,
    });
  }
  if (run.state === 'queued' || run.checkpoint === null || run.nextPage <= 1) return null;
  return run.checkpoint.at;
}

/**
 * Decides how a run continues after a worker of one of its chains went silent; the same rule for
 * every run, one stream or partitioned (see docs/design.md). Order matters and each rule has a
 * reason:
 * 1. a run that died `maxRestarts` times is a crash loop: fail it (`restart_limit`) instead of burning workers;
 * 2. a run belongs to the parameters it started with (`params_changed`) — checked before any
 *    page is committed too, so a run reconfigured before its first commit adopts the new config;
 * 3. with no position there is nothing to resume (`no_checkpoint`);
 * 4. old positions are stale (`checkpoint_stale`, 6 h);
 * 5. reconciliation and retry-failed runs never resume (`mode_not_resumable`): a reconciliation
 *    must see the whole catalog in one pass, a retry-failed run re-reads dead letters still open;
 *    full and incremental runs do, since they only load what they read;
 * 6. and only over a stream with a stable position (`stream_unordered`), where everything
 *    before the position is known to be loaded.
 */
export function decideResume(input: ResumeInput): ResumeDecision {
  const { run } = input;
  if (run.restarts >= (input.maxRestarts ?? RELIABILITY.maxRestartsPerRun))
    return { action: 'fail', verdict: 'restart_limit' };
  if (run.paramsHash !== input.currentParamsHash) return { action: 'restart', verdict: 'params_changed' };
  const at = positionAt(run);
  if (at === null) return { action: 'restart', verdict: 'no_checkpoint' };
  if (input.now - at > (input.freshnessMs ?? RELIABILITY.checkpointFreshnessMs)) {
    return { action: 'restart', verdict: 'checkpoint_stale' };
  }
  if (!RESUMABLE_MODES.includes(run.mode)) return { action: 'restart', verdict: 'mode_not_resumable' };
  if (!input.orderedByModifiedTime) return { action: 'restart', verdict: 'stream_unordered' };
  return { action: 'resume', verdict: 'resumed' };
}
