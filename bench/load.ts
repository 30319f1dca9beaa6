import { setMaxListeners } from 'node:events';
import { startRun } from '../lib/engine/index.js';
import { isActive, type SyncRun } from '../lib/run/model.js';
import { startFakeSource } from '../tools/fake-source/index.js';
import { THROUGHPUT_SOURCE } from './bare-loop.js';
import { type Interval, RequestCounter } from './counter.js';
import { putSource, round, setUpBench, sleep } from './setup.js';

/** The load phase: many sources at once through one runtime. */
export const LOAD = { sources: 50, entitiesPerSource: 200, workers: 8 } as const;

/** Result of {@link runLoad}. */
export interface LoadResult {
  readonly sources: number;
  readonly entitiesPerSource: number;
  readonly workers: number;
  readonly wallSeconds: number;
  readonly emulatorShare: number;
  readonly allSucceeded: boolean;
  /** Runs that did not end `succeeded` with exactly `entitiesPerSource` processed and stored. */
  readonly failures: readonly string[];
  readonly note: string;
}

/**
 * 50 sources each start a run at the same moment through one LocalRuntime with several workers.
 * Every run must end `succeeded` with exact counts. The emulator's share tells where the wall
 * time goes: per source, the time during its page handlers in which at least one of its AWS
 * requests was in flight, summed, over the summed handler time (worker busy time).
 */
export async function runLoad(endpoint: string): Promise<LoadResult> {
  const counter = new RequestCounter();
  const env = await setUpBench(endpoint, 'load', { counter });
  const source = await startFakeSource({
    ...THROUGHPUT_SOURCE,
    entities: LOAD.entitiesPerSource,
    profile: 'none',
  });
  const sourceIds = Array.from(
    { length: LOAD.sources },
    (_, i) => `bench-load-${String(i).padStart(2, '0')}`,
  );
  try {
    for (const id of sourceIds) await putSource(env.observer, id, source.url);
    // Every poller adds an abort listener to the runtime's one signal; more than 10 trips Node's
    // leak warning although nothing leaks. Raise the default for signals created from here on.
    setMaxListeners(LOAD.workers + 8);
    env.runtime({ workers: LOAD.workers }).start();
    counter.reset();
    const started = performance.now();
    const runs = await Promise.all(
      sourceIds.map((sourceId) => startRun(env.deps, { sourceId, mode: 'full' })),
    );
    await untilFinished(env.observer, runs);
    const wallSeconds = round((counter.lastEngineEndedAt - started) / 1_000, 2);
    await sleep(1_500); // the last deletes
    const failures = await verify(env.observer, runs);
    return {
      sources: LOAD.sources,
      entitiesPerSource: LOAD.entitiesPerSource,
      workers: LOAD.workers,
      wallSeconds,
      emulatorShare: emulatorShare(
        counter,
        new Map(runs.map((r) => [`run:${r.runId}`, `source:${r.sourceId}`])),
      ),
      allSucceeded: failures.length === 0,
      failures,
      note:
        'emulatorShare = Σ over sources of |union of that source’s engine AWS request intervals ∩ union of its ' +
        'page-handler intervals| / Σ handler durations. Request intervals come from the same SDK middleware ' +
        '(initialize step: serialization, retries and the emulator’s answer); handler intervals run from the ' +
        'ReceiveMessage answer to the DeleteMessage of that message. A source’s pages are sequential, so its ' +
        'intervals never belong to two handlers; the union keeps the 16 parallel item writes from counting 16×. ' +
        'The rest of the busy time is the source’s 50 ms per page, CPU and waiting.',
    };
  } finally {
    await env.stop();
    await source.stop();
  }
}

/**
 * Waits for every run to end, asking the runs table's active index every two seconds (one query
 * per shard): a few requests a second against the hundreds the runs make. Counting the runs'
 * transactions is no measure of their ends: a run's last page and its finish are a transaction
 * each, and a refused transaction counts as a request all the same, so a count reached early
 * left runs still going when they were verified.
 */
async function untilFinished(
  observer: Awaited<ReturnType<typeof setUpBench>>['observer'],
  runs: readonly SyncRun[],
  timeoutMs = 20 * 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ours = new Set(runs.map((r) => r.runId));
  while (Date.now() <= deadline) {
    const active = await observer.runs.listSilent(Number.MAX_SAFE_INTEGER);
    if (!active.some((run) => ours.has(run.runId) && isActive(run.state))) return;
    await sleep(2_000);
  }
}

async function verify(
  observer: Awaited<ReturnType<typeof setUpBench>>['observer'],
  runs: readonly SyncRun[],
): Promise<string[]> {
  const failures: string[] = [];
  for (const started of runs) {
    const run = await observer.runs.require(started.runId);
    const stored = (await observer.items.listAll(run.sourceId)).length;
    const ok = run.state === 'succeeded' && run.progress.processed === LOAD.entitiesPerSource;
    if (!ok || stored !== LOAD.entitiesPerSource)
      failures.push(`${run.sourceId}: ${run.state}, ${run.progress.processed} processed, ${stored} stored`);
  }
  return failures;
}

/** The emulator's share of worker busy time (see {@link runLoad}). */
export function emulatorShare(counter: RequestCounter, owners: ReadonlyMap<string, string>): number {
  const requests = new Map<string, Interval[]>();
  for (const [key, intervals] of counter.requestIntervals) {
    const owner = owners.get(key) ?? key;
    requests.set(owner, [...(requests.get(owner) ?? []), ...intervals]);
  }
  let inSdk = 0;
  let busy = 0;
  for (const [owner, handlers] of counter.handlerIntervals) {
    busy += handlers.reduce((sum, [start, end]) => sum + (end - start), 0);
    inSdk += overlap(union(requests.get(owner) ?? []), union(handlers));
  }
  return busy === 0 ? 0 : round(inSdk / busy, 3);
}

/** Merges overlapping intervals; the result is sorted and disjoint. */
export function union(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** Total length of the intersection of two sorted, disjoint interval lists. */
export function overlap(a: readonly Interval[], b: readonly Interval[]): number {
  let total = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [aStart, aEnd] = a[i]!;
    const [bStart, bEnd] = b[j]!;
    total += Math.max(0, Math.min(aEnd, bEnd) - Math.max(aStart, bStart));
    if (aEnd < bEnd) i += 1;
    else j += 1;
  }
  return total;
}
