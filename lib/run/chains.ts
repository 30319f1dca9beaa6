import type { Checkpoint, Partition, PartitionState, SyncRun } from './model.js';
import { isPartitioned, partitionOf, partitionsOf, readWindow, type Window } from './partitions.js';
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
  return isPartitioned(run) ? partitionsOf(run).map(partitionChain) : [ownChain(run)];
}

/** The chain a page message belongs to: the run's own (`partition` undefined) or a partition's; undefined when the run has no such partition. */
export function chainAt(run: SyncRun, partition: number | undefined): RunChain | undefined {
  if (partition === undefined) return ownChain(run);
  const found = partitionOf(run, partition);
  return found && partitionChain(found);
}

/** The run's own chain: done with a partitioned run's plan, or once its last page (no cursor after it) is committed. */
function ownChain(run: SyncRun): RunChain {
  const done =
    isPartitioned(run) || (run.nextPage > 1 && run.checkpoint !== null && run.checkpoint.cursor === null);
  return {
    partition: undefined,
    state: done ? 'done' : 'running',
    nextPage: run.nextPage,
    checkpoint: run.checkpoint,
    handoff: run.handoff,
    heartbeatAt: run.heartbeatAt,
    deferredUntil: run.deferredUntil,
    window: undefined,
  };
}

function partitionChain(p: Partition): RunChain {
  return {
    partition: p.index,
    state: p.state,
    nextPage: p.nextPage,
    checkpoint: p.checkpoint,
    handoff: p.handoff,
    heartbeatAt: p.heartbeatAt,
    deferredUntil: p.deferredUntil,
    window: readWindow(p),
  };
}

/** The cursor a chain's next page is fetched with: none for page 1, else its checkpoint's. */
export function nextCursor(chain: Pick<RunChain, 'nextPage' | 'checkpoint'>): string | null {
  return chain.nextPage > 1 ? (chain.checkpoint?.cursor ?? null) : null;
}

/** A chain's name in logs: `run`, or `p<index>`. */
export function chainLabel(chain: Pick<RunChain, 'partition'>): string {
  return chain.partition === undefined ? 'run' : `p${chain.partition}`;
}
