import { type Completeness, CompletenessSchema } from '../run/completeness.js';
import type {
  Checkpoint,
  Handoff,
  Partition,
  ResumeRecord,
  RunFailure,
  RunMode,
  RunOutcome,
  RunState,
  RunTrigger,
  SyncRun,
} from '../run/model.js';
import { type NO_COUNTS, type StoredChain, toPartition } from './chain-item.js';

/**
 * Converts a stored run item and its chain items into the model. The run's own chain gives the
 * run-level position (next page, checkpoint, handoff, deferral); its partitions' chains give
 * `partitions`. Progress is exact at every moment: the run item holds the counts of every chain
 * that is done (each chain's last commit adds its counts to the run in the same transaction),
 * and the chains still open add their own.
 */
export function toSyncRun(item: Record<string, unknown>, chains: readonly StoredChain[] = []): SyncRun {
  if (item.nextPage !== undefined) return inlineRun(item);
  const own = chains.find((c) => c.partition === undefined);
  const open = chains.filter((c) => c.state !== 'done');
  const sum = (key: keyof typeof NO_COUNTS) => open.reduce((total, chain) => total + chain[key], 0);
  const stored = (item.progress ?? {}) as { processed?: number; total?: number | null; pages?: number };
  const tombstoned = ((item.tombstoned ?? 0) as number) + sum('tombstoned');
  const gone = ((item.gone ?? 0) as number) + sum('gone');
  const ahead = ((item.ahead ?? 0) as number) + sum('ahead');
  const partitionCount = (item.partitionCount ?? 0) as number;
  const partitions = chains.filter((c) => c.partition !== undefined);
  return {
    ...runLevel(item),
    // A chain's flag is news the run item's copy, kept by a worker, may not have (run-heads.ts).
    ...(chains.some((c) => c.itemDeadLetters) ? { itemDeadLetters: true } : {}),
    nextPage: own?.nextPage ?? 1,
    checkpoint: own?.checkpoint ?? null,
    progress: {
      processed: (stored.processed ?? 0) + sum('processed'),
      total: stored.total ?? own?.total ?? null,
      pages: (stored.pages ?? 0) + sum('pages'),
      ...(tombstoned > 0 ? { tombstoned } : {}),
      ...(gone > 0 ? { gone } : {}),
      ...(ahead > 0 ? { ahead } : {}),
    },
    errorCount: ((item.errorCount ?? 0) as number) + sum('errorCount'),
    heartbeatAt: Math.max(item.heartbeatAt as number, own?.heartbeatAt ?? 0),
    deferredUntil: own?.deferredUntil ?? null,
    handoff: own?.handoff ?? null,
    ...(partitionCount > 0
      ? {
          partitions: Object.fromEntries(
            partitions.map((c) => [String(c.partition), toPartition(c, c.partition as number)]),
          ),
          openPartitions: (item.openPartitions ?? 0) as number,
        }
      : {}),
  };
}

/** The run's completeness check, when one was written (and reads as one). */
function completenessOf(item: Record<string, unknown>): { completeness?: Completeness } {
  if (item.completeness === undefined) return {};
  const parsed = CompletenessSchema.safeParse(item.completeness);
  return parsed.success ? { completeness: parsed.data } : {};
}

/** The attributes every run item holds, whatever its layout. */
function runLevel(item: Record<string, unknown>) {
  return {
    runId: item.runId as string,
    sourceId: item.sourceId as string,
    mode: item.mode as RunMode,
    trigger: (item.trigger ?? 'api') as RunTrigger,
    params: (item.params ?? {}) as Record<string, unknown>,
    paramsHash: item.paramsHash as string,
    state: item.state as RunState,
    epoch: item.epoch as number,
    outboxAt: (item.outboxAt ?? null) as number | null,
    restarts: (item.restarts ?? 0) as number,
    ...(typeof item.itemDeadLetters === 'boolean' ? { itemDeadLetters: item.itemDeadLetters } : {}),
    ...completenessOf(item),
    resume: item.resume as ResumeRecord,
    failure: (item.failure ?? null) as RunFailure | null,
    ...(item.outcome ? { outcome: item.outcome as RunOutcome } : {}),
    createdAt: item.createdAt as number,
    startedAt: (item.startedAt ?? null) as number | null,
    finishedAt: (item.finishedAt ?? null) as number | null,
    updatedAt: item.updatedAt as number,
  };
}

/**
 * A run stored by an earlier version, its chain (and partitions) inside the run item. Read as it
 * was written, so its history stays visible; an active one is ended (see docs/design.md).
 */
function inlineRun(item: Record<string, unknown>): SyncRun {
  const progress = (item.progress ?? {}) as { processed?: number; total?: number | null; pages?: number };
  return {
    ...runLevel(item),
    inlineChains: true,
    nextPage: item.nextPage as number,
    checkpoint: (item.checkpoint ?? null) as Checkpoint | null,
    progress: {
      processed: progress.processed ?? 0,
      total: progress.total ?? null,
      pages: progress.pages ?? 0,
      // Stored beside progress, not in it: a restart from scratch resets progress, not this count.
      ...(typeof item.tombstoned === 'number' ? { tombstoned: item.tombstoned } : {}),
      ...(typeof item.gone === 'number' ? { gone: item.gone } : {}),
    },
    errorCount: (item.errorCount ?? 0) as number,
    heartbeatAt: item.heartbeatAt as number,
    deferredUntil: (item.deferredUntil ?? null) as number | null,
    handoff: (item.handoff ?? null) as Handoff | null,
    ...(item.partitions ? { partitions: toPartitions(item.partitions as Record<string, unknown>) } : {}),
    ...(typeof item.openPartitions === 'number' ? { openPartitions: item.openPartitions } : {}),
  };
}

/** A stored partitions map, its absent attributes filled with their defaults. */
function toPartitions(stored: Record<string, unknown>): Record<string, Partition> {
  const partitions: Record<string, Partition> = {};
  for (const [key, value] of Object.entries(stored)) {
    const p = value as Record<string, unknown>;
    partitions[key] = {
      index: Number(key),
      window: p.window as Partition['window'],
      state: (p.state ?? 'running') as Partition['state'],
      nextPage: p.nextPage as number,
      checkpoint: (p.checkpoint ?? null) as Checkpoint | null,
      handoff: (p.handoff ?? null) as Handoff | null,
      heartbeatAt: p.heartbeatAt as number,
      deferredUntil: (p.deferredUntil ?? null) as number | null,
      processed: (p.processed ?? 0) as number,
      pages: (p.pages ?? 0) as number,
      errorCount: (p.errorCount ?? 0) as number,
      ceiling: (p.ceiling ?? null) as string | null,
      latest: (p.latest ?? null) as string | null,
      latestIds: (p.latestIds ?? []) as string[],
      tailFrom: (p.tailFrom ?? null) as string | null,
    };
  }
  return partitions;
}
