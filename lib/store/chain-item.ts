import type { Checkpoint, Handoff, Partition, PartitionState } from '../run/model.js';

/**
 * A page chain as stored: its own item in the SyncRuns table, beside its run. Every run has the
 * run's own chain (`run`); a partitioned run also has one chain per partition (`p0` … `pk-1`).
 * Each chain item holds the chain's position (next page, checkpoint, handoff), its signs of life
 * (heartbeat, deferral), its counters while it runs and, for a partition, its window and keyset
 * bookkeeping. The run item keeps only what concerns the run as a whole, so its size does not
 * grow with the number of chains (see docs/design.md).
 *
 * A chain item also carries the run's `epoch` and, once the run ended, `ended`: every chain write
 * is conditioned on them, so the fence (which moves every open chain to the new epoch) and the
 * end of the run (which marks every chain) stop a lost worker at its next write, without any
 * chain write touching the run item.
 */

/**
 * The condition every chain write starts with: the chain exists, belongs to the writer's epoch
 * (the fence moves every open chain to the new one) and its run has not ended (the end marks
 * every chain). The run item is not read or written: a chain's writes land on its own item.
 */
export const CHAIN_LIVE = 'attribute_exists(runId) AND epoch = :epoch AND attribute_not_exists(ended)';

/** Which page chain: the run's own (`partition` undefined) or one partition's. */
export interface ChainRef {
  readonly runId: string;
  readonly partition?: number | undefined;
}

/** The chain key prefix inside a run's key (run ids are ULIDs and never contain `#`). */
const CHAIN_KEY_INFIX = '#chain#';

/** The chain's name within its run: `run`, or `p<index>` for a partition. */
export function chainName(partition: number | undefined): string {
  return partition === undefined ? 'run' : `p${partition}`;
}

/** The table key of a chain item. */
export function chainKey(ref: ChainRef): { runId: string } {
  return { runId: `${ref.runId}${CHAIN_KEY_INFIX}${chainName(ref.partition)}` };
}

/** The chains a run stores: its own, then its `partitionCount` partitions. */
export function chainRefs(runId: string, partitionCount: number): ChainRef[] {
  return [{ runId }, ...Array.from({ length: partitionCount }, (_, partition) => ({ runId, partition }))];
}

/** A chain's state: `running` (a page due or in work), `idle` (an open window awaiting its tail pass), `done`. */
export type ChainState = PartitionState;

/** The counters a chain keeps while it runs; its run adds them up when the chain is done. */
export interface ChainCounters {
  readonly processed: number;
  readonly pages: number;
  readonly errorCount: number;
  readonly tombstoned: number;
  readonly gone: number;
  readonly ahead: number;
}

/** A chain as read from its item. */
export interface StoredChain extends ChainCounters {
  readonly partition: number | undefined;
  readonly epoch: number;
  readonly ended: boolean;
  readonly state: ChainState;
  readonly nextPage: number;
  readonly checkpoint: Checkpoint | null;
  readonly handoff: Handoff | null;
  readonly heartbeatAt: number;
  readonly deferredUntil: number | null;
  /** The source's total as the run's own chain last estimated it (null: unknown). */
  readonly total: number | null;
  /** The total the source itself stated on the own chain's latest page that stated one (null: none did). */
  readonly statedTotal: number | null;
  /** A partition's window and keyset bookkeeping (see {@link Partition}); absent on the run's own chain. */
  readonly window?: Partition['window'];
  readonly ceiling: string | null;
  readonly latest: string | null;
  readonly latestIds: readonly string[];
  readonly tailFrom: string | null;
  /** The run filed an item dead letter from a page of this chain (see `SyncRunStore.markItemDeadLetters`). */
  readonly itemDeadLetters: boolean;
  /**
   * The token of the last write that moved the chain on (a commit, a tail pass's arming): the
   * writer reads it back when DynamoDB's answer was lost, to learn whether its write landed.
   */
  readonly writeToken: string | null;
}

/** Zeroed counters. */
export const NO_COUNTS: ChainCounters = {
  processed: 0,
  pages: 0,
  errorCount: 0,
  tombstoned: 0,
  gone: 0,
  ahead: 0,
};

/** The item of a chain due at page 1 from `now`, at `epoch`. */
export function newChainItem(
  ref: ChainRef,
  epoch: number,
  now: number,
  window?: Partition['window'],
): Record<string, unknown> {
  return {
    ...chainKey(ref),
    ...(ref.partition !== undefined ? { partition: ref.partition } : {}),
    epoch,
    chainState: 'running',
    nextPage: 1,
    handoff: { page: 1, at: now, sentAt: null },
    heartbeatAt: now,
    ...NO_COUNTS,
    ...(window ? { window } : {}),
  };
}

/** Reads a chain item, filling absent attributes with their defaults. */
export function toChain(item: Record<string, unknown>): StoredChain {
  return {
    partition: typeof item.partition === 'number' ? item.partition : undefined,
    epoch: item.epoch as number,
    ended: item.ended !== undefined,
    state: (item.chainState ?? 'running') as ChainState,
    nextPage: item.nextPage as number,
    checkpoint: (item.checkpoint ?? null) as Checkpoint | null,
    handoff: (item.handoff ?? null) as Handoff | null,
    heartbeatAt: item.heartbeatAt as number,
    deferredUntil: (item.deferredUntil ?? null) as number | null,
    processed: (item.processed ?? 0) as number,
    pages: (item.pages ?? 0) as number,
    errorCount: (item.errorCount ?? 0) as number,
    tombstoned: (item.tombstoned ?? 0) as number,
    gone: (item.gone ?? 0) as number,
    ahead: (item.ahead ?? 0) as number,
    total: (item.total ?? null) as number | null,
    statedTotal: (item.statedTotal ?? null) as number | null,
    ...(item.window ? { window: item.window as Partition['window'] } : {}),
    ceiling: (item.ceiling ?? null) as string | null,
    latest: (item.latest ?? null) as string | null,
    latestIds: (item.latestIds ?? []) as string[],
    tailFrom: (item.tailFrom ?? null) as string | null,
    itemDeadLetters: item.itemDeadLetters === true,
    writeToken: (item.writeToken ?? null) as string | null,
  };
}

/** A partition chain in the model's shape. */
export function toPartition(chain: StoredChain, index: number): Partition {
  return {
    index,
    window: chain.window ?? { from: null, until: null },
    state: chain.state,
    nextPage: chain.nextPage,
    checkpoint: chain.checkpoint,
    handoff: chain.handoff,
    heartbeatAt: chain.heartbeatAt,
    deferredUntil: chain.deferredUntil,
    processed: chain.processed,
    pages: chain.pages,
    errorCount: chain.errorCount,
    ceiling: chain.ceiling,
    latest: chain.latest,
    latestIds: chain.latestIds,
    tailFrom: chain.tailFrom,
  };
}
