import type { Checkpoint, PartitionState, SyncRun } from './model.js';
import { isPartitioned, partitionsOf, readWindow, type Window } from './partitions.js';
import type { SilenceInput } from './silence.js';

/**
 * A run's page chains in one shape, whatever kind of run: the run's own chain for a run read as
 * one stream, its partitions' chains for a partitioned run (whose own chain ended with its plan).
 * The reaper judges each by the same rule.
 */
export interface RunChain extends SilenceInput {
  /** The partition, or undefined for the run's own chain. */
  readonly partition: number | undefined;
  readonly state: PartitionState;
  readonly checkpoint: Checkpoint | null;
  /** The window the chain's pages are read in; undefined for the whole stream. */
  readonly window: Window | undefined;
}

/** The chains of `run` that carry its pages. */
export function chainsOf(run: SyncRun): RunChain[] {
  if (isPartitioned(run)) {
    return partitionsOf(run).map((p) => ({
      partition: p.index,
      state: p.state,
      nextPage: p.nextPage,
      checkpoint: p.checkpoint,
      handoff: p.handoff,
      heartbeatAt: p.heartbeatAt,
      deferredUntil: p.deferredUntil,
      window: readWindow(p),
    }));
  }
  // The run's own chain is done once its last page (no cursor after it) is committed.
  const done = run.nextPage > 1 && run.checkpoint !== null && run.checkpoint.cursor === null;
  return [
    {
      partition: undefined,
      state: done ? 'done' : 'running',
      nextPage: run.nextPage,
      checkpoint: run.checkpoint,
      handoff: run.handoff,
      heartbeatAt: run.heartbeatAt,
      deferredUntil: run.deferredUntil,
      window: undefined,
    },
  ];
}

/** The cursor a chain's next page is fetched with: none for page 1, else its checkpoint's. */
export function nextCursor(chain: Pick<RunChain, 'nextPage' | 'checkpoint'>): string | null {
  return chain.nextPage > 1 ? (chain.checkpoint?.cursor ?? null) : null;
}

/** A chain's name in logs: `run`, or `p<index>`. */
export function chainLabel(chain: Pick<RunChain, 'partition'>): string {
  return chain.partition === undefined ? 'run' : `p${chain.partition}`;
}
