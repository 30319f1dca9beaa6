import { RELIABILITY } from '../config/constants.js';
import type { ResumeVerdict, SyncRun } from './model.js';

/** What the reaper does with a silent run. */
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

/** Everything the decision depends on; no I/O. */
export interface ResumeInput {
  readonly run: Pick<SyncRun, 'mode' | 'checkpoint' | 'restarts' | 'paramsHash' | 'state' | 'nextPage'>;
  /** Whether the connector (for this source's config) streams in global modification-time order. */
  readonly orderedByModifiedTime: boolean;
  /** The params hash the run would have if it started now (detects reconfiguration). */
  readonly currentParamsHash: string;
  readonly now: number;
  readonly maxRestarts?: number;
  readonly freshnessMs?: number;
}

/**
 * Decides how a silent run continues. Order matters and each rule has a reason:
 * 1. a run that died `maxRestarts` times is a crash loop: fail it (`restart_limit`) instead of burning workers;
 * 2. a run belongs to the parameters it started with (`params_changed`) — checked before any
 *    page is committed too, so a run reconfigured before its first commit adopts the new config
 *    instead of restarting with the old one;
 * 3. with no committed page there is nothing to resume (`no_checkpoint`);
 * 4. old cursors are stale (`checkpoint_stale`, 6 h);
 * 5. only incremental runs resume (`mode_not_resumable`): full and reconciliation runs must see
 *    the whole catalog in one pass, retry-failed runs re-read dead letters that are still open;
 * 6. and only over a stream ordered by modification time (`stream_unordered`), where everything
 *    before the cursor is known to be loaded.
 */
export function decideResume(input: ResumeInput): ResumeDecision {
  const { run } = input;
  if (run.restarts >= (input.maxRestarts ?? RELIABILITY.maxRestartsPerRun))
    return { action: 'fail', verdict: 'restart_limit' };
  if (run.paramsHash !== input.currentParamsHash) return { action: 'restart', verdict: 'params_changed' };
  if (run.state === 'queued' || run.checkpoint === null || run.nextPage <= 1) {
    return { action: 'restart', verdict: 'no_checkpoint' };
  }
  if (input.now - run.checkpoint.at > (input.freshnessMs ?? RELIABILITY.checkpointFreshnessMs)) {
    return { action: 'restart', verdict: 'checkpoint_stale' };
  }
  if (run.mode !== 'incremental') return { action: 'restart', verdict: 'mode_not_resumable' };
  if (!input.orderedByModifiedTime) return { action: 'restart', verdict: 'stream_unordered' };
  return { action: 'resume', verdict: 'resumed' };
}

/** Everything the decision for a partitioned run depends on; no I/O. */
export interface PartitionedResumeInput {
  readonly run: Pick<SyncRun, 'restarts' | 'paramsHash'>;
  readonly currentParamsHash: string;
  /** When the run last made progress: its latest partition commit, its plan or its last re-arm. */
  readonly lastProgressAt: number;
  readonly now: number;
  readonly maxRestarts?: number;
  readonly freshnessMs?: number;
}

/**
 * Decides how a partitioned run continues after one of its partitions' workers went silent. The
 * rules of {@link decideResume}, minus the ones its position makes moot: a partitioned run was
 * planned only over a stream ordered by modification time with a keyset position, and its plan
 * and every partition's checkpoint are positions in that stream — everything before each
 * partition's position in its window is stored — so full and first incremental runs alike resume
 * every unfinished partition where it stood, even one that committed nothing yet (its position is
 * its window's start). Crash loops still fail (`restart_limit`); a reconfigured source
 * (`params_changed`) or a position older than the freshness budget (`checkpoint_stale`) restarts
 * the run from scratch, which plans it again.
 */
export function decidePartitionedResume(input: PartitionedResumeInput): ResumeDecision {
  if (input.run.restarts >= (input.maxRestarts ?? RELIABILITY.maxRestartsPerRun))
    return { action: 'fail', verdict: 'restart_limit' };
  if (input.run.paramsHash !== input.currentParamsHash)
    return { action: 'restart', verdict: 'params_changed' };
  if (input.now - input.lastProgressAt > (input.freshnessMs ?? RELIABILITY.checkpointFreshnessMs))
    return { action: 'restart', verdict: 'checkpoint_stale' };
  return { action: 'resume', verdict: 'resumed' };
}
