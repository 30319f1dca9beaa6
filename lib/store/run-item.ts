import type {
  Checkpoint,
  Handoff,
  Partition,
  ResumeRecord,
  RunFailure,
  RunMode,
  RunState,
  RunTrigger,
  SyncRun,
} from '../run/model.js';

/** Converts a stored SyncRun item into the model, filling attributes a run does not have yet with null. */
export function toSyncRun(item: Record<string, unknown>): SyncRun {
  const progress = (item.progress ?? {}) as { processed?: number; total?: number | null; pages?: number };
  return {
    runId: item.runId as string,
    sourceId: item.sourceId as string,
    mode: item.mode as RunMode,
    trigger: (item.trigger ?? 'api') as RunTrigger,
    params: (item.params ?? {}) as Record<string, unknown>,
    paramsHash: item.paramsHash as string,
    state: item.state as RunState,
    epoch: item.epoch as number,
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
    outboxAt: (item.outboxAt ?? null) as number | null,
    restarts: (item.restarts ?? 0) as number,
    resume: item.resume as ResumeRecord,
    failure: (item.failure ?? null) as RunFailure | null,
    createdAt: item.createdAt as number,
    startedAt: (item.startedAt ?? null) as number | null,
    finishedAt: (item.finishedAt ?? null) as number | null,
    updatedAt: item.updatedAt as number,
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
