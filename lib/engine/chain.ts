import type { EngineDeps } from './deps.js';

/**
 * The page chain a message belongs to: the run's own (an unpartitioned run, or the planning step
 * of a partitioned one) or one partition's. Both keep the same bookkeeping — claim, heartbeat,
 * handoff, deferral — with the same conditions, on the run-level attributes or on the
 * partition's; the step talks to the chain and does not care which.
 */
export interface PageChain {
  /** The partition, or undefined for the run's own chain. */
  readonly partition: number | undefined;
  claim(runId: string, epoch: number, page: number, now: number): Promise<void>;
  heartbeat(runId: string, epoch: number, now: number): Promise<void>;
  confirmSent(runId: string, epoch: number, page: number, now: number): Promise<boolean>;
  renewHandoff(runId: string, epoch: number, page: number, readAt: number, now: number): Promise<boolean>;
  handBack(runId: string, epoch: number, page: number, now: number): Promise<boolean>;
  defer(runId: string, epoch: number, page: number, until: number, now: number): Promise<void>;
}

/** The chain of `partition` (undefined: the run's own). */
export function chainOf(
  deps: Pick<EngineDeps, 'runs' | 'partitions'>,
  partition: number | undefined,
): PageChain {
  if (partition === undefined) {
    const runs = deps.runs;
    return {
      partition,
      claim: (runId, epoch, page, now) => runs.claim(runId, epoch, page, now),
      heartbeat: (runId, epoch, now) => runs.heartbeat(runId, epoch, now),
      confirmSent: (runId, epoch, page, now) => runs.confirmSent(runId, epoch, page, now),
      renewHandoff: (runId, epoch, page, readAt, now) => runs.renewHandoff(runId, epoch, page, readAt, now),
      handBack: (runId, epoch, page, now) => runs.handBack(runId, epoch, page, now),
      defer: (runId, epoch, page, until, now) => runs.defer(runId, epoch, page, until, now),
    };
  }
  const store = deps.partitions;
  return {
    partition,
    claim: (runId, epoch, page, now) => store.claim(runId, epoch, partition, page, now),
    heartbeat: (runId, epoch, now) => store.heartbeat(runId, epoch, partition, now),
    confirmSent: (runId, epoch, page, now) => store.confirmSent(runId, epoch, partition, page, now),
    renewHandoff: (runId, epoch, page, readAt, now) =>
      store.renewHandoff(runId, epoch, partition, page, readAt, now),
    handBack: (runId, epoch, page, now) => store.handBack(runId, epoch, partition, page, now),
    defer: (runId, epoch, page, until, now) => store.defer(runId, epoch, partition, page, until, now),
  };
}
