import { compactId, idSet } from './compact-ids.js';
import type { Checkpoint, Partition, SyncRun } from './model.js';

/**
 * Partitioned runs, the pure part: how many partitions, which windows, and what a run made of
 * partitions adds up to. A run over a stream ordered by modification time with a keyset position
 * may be split into k windows `[T0,T1) … [Tk-1, ∞)` chosen by the connector from the data; each
 * window is read as its own keyset stream (its own page chain, checkpoint, handoff and heartbeat).
 * The last window is open, so entities edited during the run, which move to the end of the
 * stream, are read by it.
 */

/** Hard upper bound on partitions per run: keeps the run item far below DynamoDB's 400 KB. */
export const MAX_PARTITIONS_LIMIT = 64;

/**
 * The number of windows a run may ask for: the run's own request (a start parameter) if any,
 * else the stack's default, never more than {@link MAX_PARTITIONS_LIMIT} nor than the requests
 * its credential may have in flight at once (`concurrencyCap`: more partitions than that would
 * only queue for the cap). 1 means never split.
 */
export function partitionBound(
  requested: number | undefined,
  stackDefault: number,
  concurrencyCap: number = Number.POSITIVE_INFINITY,
): number {
  const k = Math.min(requested ?? stackDefault, concurrencyCap);
  return Math.max(1, Math.min(MAX_PARTITIONS_LIMIT, Math.floor(k)));
}

/** One window of modification time; a null bound is open. */
export interface Window {
  readonly from: string | null;
  readonly until: string | null;
}

/**
 * The windows a plan's boundaries make: `[since, b1) [b1, b2) … [bk-1, ∞)`. Boundaries that are
 * not strictly ascending (or not after `since`) are dropped, so windows never overlap and always
 * cover the stream from `since` to its end. No usable boundary: one window, the whole stream.
 */
export function windowsOf(since: string | null, boundaries: readonly string[], max: number): Window[] {
  const usable: string[] = [];
  for (const boundary of boundaries) {
    const previous = usable.at(-1) ?? since;
    if (previous !== null && boundary <= previous) continue;
    usable.push(boundary);
  }
  const cut = usable.slice(0, Math.max(0, max - 1));
  const starts = [since, ...cut];
  return starts.map((from, index) => ({ from, until: cut[index] ?? null }));
}

/** The partitions of a freshly planned run: every window due at page 1, handed to the queue now. */
export function newPartitions(windows: readonly Window[], now: number): Record<string, Partition> {
  return Object.fromEntries(
    windows.map((window, index) => [
      String(index),
      {
        index,
        window,
        state: 'running',
        nextPage: 1,
        checkpoint: null,
        handoff: { page: 1, at: now, sentAt: null },
        heartbeatAt: now,
        deferredUntil: null,
        processed: 0,
        pages: 0,
        errorCount: 0,
        ceiling: null,
        latest: null,
        latestIds: [],
        tailFrom: null,
      } satisfies Partition,
    ]),
  );
}

/** The window a partition's pages are fetched with: its own, from its tail's start during a tail pass. */
export function readWindow(partition: Pick<Partition, 'window' | 'tailFrom'>): Window {
  return partition.tailFrom === null ? partition.window : { ...partition.window, from: partition.tailFrom };
}

/** A run's partitions in index order; empty for a run read as one stream. */
export function partitionsOf(run: Pick<SyncRun, 'partitions'>): Partition[] {
  return Object.values(run.partitions ?? {}).sort((a, b) => a.index - b.index);
}

/** The partition a page message names, or undefined (none named, or the run has no such partition). */
export function partitionOf(
  run: Pick<SyncRun, 'partitions'>,
  partition: number | undefined,
): Partition | undefined {
  return partition === undefined ? undefined : run.partitions?.[String(partition)];
}

/** How many partitions the run was split into (0: read as one stream). */
export function partitionCount(run: Pick<SyncRun, 'partitions'>): number {
  return Object.keys(run.partitions ?? {}).length;
}

/** True when the run was split into partitions. */
export function isPartitioned(run: Pick<SyncRun, 'partitions'>): boolean {
  return run.partitions !== undefined && Object.keys(run.partitions).length > 0;
}

/** The lower of two ceilings (null: no ceiling). */
export function lowerCeiling(a: string | null, b: string | null | undefined): string | null {
  if (b === null || b === undefined) return a;
  if (a === null) return b;
  return a <= b ? a : b;
}

/**
 * The watermark a partitioned run that read every window may commit: the latest version any
 * partition read (every window before it is complete, so everything modified before it is
 * stored), capped by the lowest ceiling any partition met (a tie group read by position), and
 * never below what the run started from. Null: nothing read and nothing to keep.
 */
export function partitionedWatermark(
  partitions: readonly Pick<Partition, 'checkpoint' | 'ceiling'>[],
  starting: string | null,
): string | null {
  let latest = starting;
  let ceiling: string | null = null;
  for (const partition of partitions) {
    const watermark = partition.checkpoint?.watermark ?? null;
    if (watermark !== null && (latest === null || watermark > latest)) latest = watermark;
    ceiling = lowerCeiling(ceiling, partition.ceiling);
  }
  if (latest === null || ceiling === null) return latest;
  const capped = latest <= ceiling ? latest : ceiling;
  // The ceiling never takes the watermark below where the run started: that point was already stored.
  return starting !== null && capped < starting ? starting : capped;
}

/**
 * Where a partitioned run's watermark holds below the latest version it read: the lowest ceiling
 * any window met (it stopped short of its end on a guess, or a tie group changed while it was read
 * by position). Null: nothing holds it, or the run was not split.
 */
export function heldWatermark(
  partitions: readonly Pick<Partition, 'checkpoint' | 'ceiling'>[],
): string | null {
  let ceiling: string | null = null;
  let latest: string | null = null;
  for (const partition of partitions) {
    ceiling = lowerCeiling(ceiling, partition.ceiling);
    const watermark = partition.checkpoint?.watermark ?? null;
    if (watermark !== null && (latest === null || watermark > latest)) latest = watermark;
  }
  return ceiling !== null && latest !== null && ceiling < latest ? ceiling : null;
}

/** The latest commit of any partition (progress of the run as a whole), or null. */
export function latestPartitionCheckpoint(partitions: readonly Partition[]): Checkpoint | null {
  let latest: Checkpoint | null = null;
  for (const partition of partitions) {
    const checkpoint = partition.checkpoint;
    if (checkpoint && (latest === null || checkpoint.at > latest.at)) latest = checkpoint;
  }
  return latest;
}

/**
 * Most ids kept at a partition's latest version: beyond it, a tail pass asks the store (see
 * `engine/work/tail-reads.ts`). Kept compact (compact-ids.ts): 64 partitions' ids stay ~100 KB of the
 * run item whatever the source's id length.
 */
export const MAX_LATEST_IDS = 100;

/**
 * A partition's latest version read and the ids read at it, after a page of `entities`.
 * @example
 * advanceLatest({ latest: 'b', latestIds: ['1'] }, [{ id: '2', version: 'b' }, { id: '3', version: 'a' }])
 * // → { latest: 'b', latestIds: ['1', '2'] }
 */
export function advanceLatest(
  previous: Pick<Partition, 'latest' | 'latestIds'>,
  entities: readonly { id: string; version: string }[],
): { latest: string | null; latestIds: string[] } {
  let latest = previous.latest;
  let ids = previous.latestIds.map(compactId);
  for (const entity of entities) {
    const id = compactId(entity.id);
    if (latest === null || entity.version > latest) {
      latest = entity.version;
      ids = [id];
    } else if (entity.version === latest && !ids.includes(id)) {
      ids.push(id);
    }
  }
  return { latest, latestIds: ids.slice(0, MAX_LATEST_IDS) };
}

/** Entities a partition already read at exactly its latest version (a tail pass lists them again): left out. */
export function notReadYet<T extends { id: string; version: string }>(
  partition: Pick<Partition, 'latest' | 'latestIds'>,
  entities: readonly T[],
): T[] {
  if (partition.latest === null) return [...entities];
  const read = idSet(partition.latestIds);
  return entities.filter((e) => !(e.version === partition.latest && read.has(e.id)));
}
