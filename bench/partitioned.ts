import { startRun } from '../lib/engine/index.js';
import { stableHash } from '../lib/run/hash.js';
import { isTerminal, type SyncRun } from '../lib/run/model.js';
import { isPartitioned, partitionsOf } from '../lib/run/partitions.js';
import { type FakeSource, startFakeSource } from '../tools/fake-source/index.js';
import { isItemWrite, type OpStats, RequestCounter } from './counter.js';
import { type BenchEnv, round, secondsSince, setUpBench, waitForRun } from './setup.js';

/**
 * The `partitioned` phase: one slow source read two ways — a bare sequential loop over its
 * listing (the physical limit of one ordered stream), and a `full` run split into k partitions
 * on the local stack — with the same per-request latency on both sides (the fake source's
 * `latencyMs` delays every page request, planning reads included).
 *
 * The source is the fake's GitHub shape, read by the `github-issues` connector: 4,000 issues, 20
 * a page (200 pages). Its latency is chosen so that the source, not the emulator, bounds the
 * pipeline — see {@link PARTITIONED_SOURCE}.
 */

/**
 * 200 pages of 20 issues; 5 s a page. Why 5 s, not 1 s: moto serializes
 * DynamoDB requests, and one run of this source through the pipeline costs ~8,000 of them (an
 * item write per entity, plus the control plane and the event source mapping's requests per
 * page): 50 s on this machine read as one stream with no source latency, 60–90 s split into eight
 * partitions (concurrent requests contend in the emulator). The phase measures that floor again
 * on every run (`emulatorFloorSeconds`). A partition's page costs the source latency L plus its
 * share of a saturated emulator, m ≈ 2.5–3 s here (eight partitions' loads queue behind each
 * other), and a partition reads ~27 pages (~216 in all: a keyset page asks `since` the last issue
 * it delivered, inclusive, and re-lists it) against the bare loop's 25 per eighth, so the ratio is
 * ≈ (27 / 200) · (1 + m / L) plus planning: at 1 s a page ≈ 0.5 (the ratio would measure moto),
 * measured 0.27 at 3 s, ≈ 0.22 at 5 s, where eight partitions wait ~135 s on the source against
 * an emulator floor of ≤ 90 s — the source dominates. `BENCH_PARTITIONED_LATENCY_MS` overrides it
 * (development only).
 */
export const PARTITIONED_SOURCE = {
  entities: 4_000,
  perPage: 20,
  latencyMs: Number(process.env.BENCH_PARTITIONED_LATENCY_MS ?? 5_000),
  partitions: 8,
  seed: 42,
} as const;

/** In-process page workers of the partitioned run: one per partition, plus the planning step's. */
const WORKERS = PARTITIONED_SOURCE.partitions + 1;

const OWNER = 'bench';
const REPO = 'partitioned';

/** Result of {@link runPartitioned}. */
export interface PartitionedResult {
  readonly source: typeof PARTITIONED_SOURCE & { readonly shape: string; readonly pages: number };
  /** The bare sequential loop over the listing, seconds. */
  readonly bareLoopSeconds: number;
  /** startRun → the run's finishing write, seconds; null when the run was not partitioned. */
  readonly pipelineSeconds: number | null;
  /** pipelineSeconds / bareLoopSeconds; null when the partitioned pipeline is unavailable. */
  readonly partitionedSpeedup: number | null;
  /** Partitions the run was split into (null: not split). */
  readonly partitions: number | null;
  readonly pages: number | null;
  readonly entities: number | null;
  /** The same run's pipeline with no source latency: what the emulator alone costs, seconds. */
  readonly emulatorFloorSeconds: number | null;
  /** AWS requests per page of the partitioned run: item writes and everything else. */
  readonly requestsPerPage: PipelineRun['requestsPerPage'];
  readonly workers: number;
  /** Why the pipeline half has no numbers, when it has none. */
  readonly unavailable: string | null;
  readonly note: string;
}

function listingUrl(base: string, page: number): string {
  const url = new URL(`${base}/repos/${OWNER}/${REPO}/issues`);
  url.searchParams.set('state', 'all');
  url.searchParams.set('sort', 'updated');
  url.searchParams.set('direction', 'asc');
  url.searchParams.set('per_page', String(PARTITIONED_SOURCE.perPage));
  url.searchParams.set('page', String(page));
  return url.href;
}

function startSource(latencyMs: number): Promise<FakeSource> {
  const { entities, seed } = PARTITIONED_SOURCE;
  return startFakeSource({ entities, seed, latencyMs, profile: 'none' });
}

/**
 * The physical limit of one stream: the listing's pages one after the other, following
 * `Link: rel="next"`, nothing stored.
 */
export async function runPartitionedBare(
  signal?: AbortSignal,
): Promise<{ seconds: number; pages: number; entities: number }> {
  const source = await startSource(PARTITIONED_SOURCE.latencyMs);
  try {
    const started = performance.now();
    let url: string | null = listingUrl(source.url, 1);
    let pages = 0;
    let entities = 0;
    while (url !== null) {
      signal?.throwIfAborted();
      const response = await fetch(url, signal ? { signal } : {});
      if (!response.ok) throw new Error(`bare loop: ${url} answered ${response.status}`);
      entities += ((await response.json()) as unknown[]).length;
      pages += 1;
      url = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1] ?? null;
    }
    const seconds = secondsSince(started);
    if (entities !== PARTITIONED_SOURCE.entities)
      throw new Error(`bare loop read ${entities} issues, expected ${PARTITIONED_SOURCE.entities}`);
    return { seconds, pages, entities };
  } finally {
    await source.stop();
  }
}

async function putGithubSource(env: BenchEnv, sourceId: string, baseUrl: string): Promise<void> {
  const config = { owner: OWNER, repo: REPO, baseUrl, perPage: PARTITIONED_SOURCE.perPage };
  const connector = 'github-issues';
  await env.observer.sources.put(
    { sourceId, connector, config, schedules: [], configHash: stableHash({ connector, config }) },
    Date.now(),
  );
}

/** Requests the local stand-ins make that AWS would not bill per page (idle polls, schedule listing). */
const LOCAL_ONLY = new Set(['esm:SQS.ReceiveMessage(empty)', 'esm:Scheduler.ListSchedules']);

function perPage(ops: Record<string, OpStats>, pages: number): PipelineRun['requestsPerPage'] {
  let itemWrites = 0;
  let other = 0;
  for (const [key, stats] of Object.entries(ops)) {
    if (LOCAL_ONLY.has(key)) continue;
    if (isItemWrite(key.slice(key.indexOf(':') + 1))) itemWrites += stats.count;
    else other += stats.count;
  }
  return { itemWrites: round(itemWrites / pages, 2), other: round(other / pages, 2) };
}

/** How many partitions a run records; null on a run read as one stream. */
function partitionCount(run: SyncRun): number | null {
  return isPartitioned(run) ? partitionsOf(run).length : null;
}

interface PipelineRun {
  /** Null when the run was not split and not waited for. */
  readonly seconds: number | null;
  /** AWS requests per page of the run (engine and event source mapping; idle polls left out). */
  readonly requestsPerPage: { readonly itemWrites: number; readonly other: number } | null;
  readonly run: SyncRun;
  readonly partitions: number | null;
}

/** One `full` run of the source through the local stack (source latency `latencyMs`), asking for k partitions. */
export async function runPipelineOnce(
  endpoint: string,
  latencyMs: number,
  hint: string,
  measureUnsplit = false,
): Promise<PipelineRun> {
  const counter = new RequestCounter();
  const env = await setUpBench(endpoint, hint, { counter });
  const source = await startSource(latencyMs);
  try {
    const sourceId = `bench-${hint}`;
    await putGithubSource(env, sourceId, source.url);
    env.runtime({ workers: WORKERS }).start();
    counter.reset();
    const started = performance.now();
    // `partitions` is the run's bound on its split; the stack's own bound applies too.
    const { runId } = await startRun(env.deps, {
      sourceId,
      mode: 'full',
      partitions: PARTITIONED_SOURCE.partitions,
    });
    // A run that committed a page without recording partitions is read as one stream: it is not
    // what this phase measures, so it is left there (its resources are the phase's own).
    const unsplit = (run: SyncRun) => run.progress.pages >= 1 && partitionCount(run) === null;
    const run = await waitForRun(env.observer, runId, {
      everyMs: 1_000,
      until: (r) => isTerminal(r.state) || (!measureUnsplit && unsplit(r)),
    });
    const seconds = round((counter.lastEngineEndedAt - started) / 1_000, 3);
    const partitions = partitionCount(run);
    if (!isTerminal(run.state)) return { seconds: null, requestsPerPage: null, run, partitions };
    const requestsPerPage = perPage(counter.snapshot(), run.progress.pages);
    if (run.state !== 'succeeded' || run.progress.processed !== PARTITIONED_SOURCE.entities)
      throw new Error(`partitioned run ended ${run.state} with ${run.progress.processed} processed`);
    const items = await env.observer.items.listAll(sourceId);
    if (items.length !== PARTITIONED_SOURCE.entities)
      throw new Error(
        `partitioned run stored ${items.length} items, expected ${PARTITIONED_SOURCE.entities}`,
      );
    return { seconds, requestsPerPage, run, partitions };
  } finally {
    await env.stop();
    await source.stop();
  }
}

/**
 * The phase: the bare loop, and meanwhile the partitioned run, then the same run without source
 * latency (the emulator's floor). The bare loop only waits on its own fake source (no emulator,
 * next to no CPU), so running it alongside the pipeline leaves both measurements as they are and
 * saves its whole duration. A run the engine did not split is reported as unavailable, never timed
 * as if it were partitioned.
 */
export async function runPartitioned(endpoint: string): Promise<PartitionedResult> {
  const pages = Math.ceil(PARTITIONED_SOURCE.entities / PARTITIONED_SOURCE.perPage);
  const abort = new AbortController();
  const bareRun = runPartitionedBare(abort.signal);
  // Awaited below; a rejection before then must not count as unhandled.
  bareRun.catch(() => undefined);
  let slow: PipelineRun;
  let floor: PipelineRun | null = null;
  try {
    slow = await runPipelineOnce(endpoint, PARTITIONED_SOURCE.latencyMs, 'partitioned');
    if (slow.seconds !== null && (slow.partitions ?? 0) >= 2) {
      floor = await runPipelineOnce(endpoint, 0, 'partitioned-floor', true);
    }
  } catch (error) {
    abort.abort();
    throw error;
  }
  const bare = await bareRun;
  const base = {
    source: { ...PARTITIONED_SOURCE, shape: 'github-issues (fake source)', pages },
    bareLoopSeconds: bare.seconds,
    workers: WORKERS,
  };
  if (floor === null || slow.seconds === null || slow.partitions === null) {
    return {
      ...base,
      pipelineSeconds: null,
      partitionedSpeedup: null,
      partitions: slow.partitions,
      pages: null,
      entities: null,
      emulatorFloorSeconds: null,
      requestsPerPage: null,
      unavailable:
        'the engine read the run as one stream (it committed a page without recording partitions): partitioned runs are not available in this build',
      note: 'no partitioned numbers: the pipeline half needs the engine to split runs',
    };
  }
  return {
    ...base,
    pipelineSeconds: slow.seconds,
    partitionedSpeedup: round(slow.seconds / bare.seconds, 3),
    partitions: slow.partitions,
    pages: slow.run.progress.pages,
    entities: slow.run.progress.processed,
    emulatorFloorSeconds: floor.seconds,
    requestsPerPage: slow.requestsPerPage,
    unavailable: null,
    note:
      `pipeline: startRun → the finishing write of a full run split into ${slow.partitions} partitions, ` +
      `${WORKERS} in-process page workers on moto; bare loop: the same listing's ${pages} pages fetched one after ` +
      'the other with nothing stored, run alongside; both against the fake source with the same latency on every ' +
      'page request (planning reads included)',
  };
}
