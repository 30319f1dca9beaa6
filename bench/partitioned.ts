import { startRun } from '../lib/engine/start-run.js';
import { type FakeSource, startFakeSource } from '../lib/local/fake-source/index.js';
import { stableHash } from '../lib/run/hash.js';
import { isTerminal, type SyncRun } from '../lib/run/model.js';
import { RequestCounter } from './counter.js';
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
 * 200 pages of 20 issues; 2 s a page. Why 2 s, not the 1 s the issue suggests: moto serializes
 * DynamoDB requests, and one run of this source through the pipeline costs ~6,000 of them (an
 * item write per entity plus ~8 control-plane requests and the event source mapping's 2 per
 * page), measured at ~50 s on this machine with no source latency at all (the phase measures it
 * again as `emulatorFloorSeconds`). At 1 s a page the bare loop takes 200 s, so the goal (≤ 0.25×)
 * would ask for ≤ 50 s — the emulator's floor alone: the ratio would measure moto. At 2 s a page
 * the bare loop takes 400 s and eight partitions ~53 s of source time, above the emulator's
 * share, so the ratio shows what partitions buy. (The pipeline reads ~211 pages, not 200: a keyset
 * page asks `since` the last issue it delivered, inclusive, and spends one slot re-listing it.)
 */
export const PARTITIONED_SOURCE = {
  entities: 4_000,
  perPage: 20,
  latencyMs: Number(process.env.BENCH_PARTITIONED_LATENCY_MS ?? 2_000),
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
export async function runPartitionedBare(): Promise<{ seconds: number; pages: number; entities: number }> {
  const source = await startSource(PARTITIONED_SOURCE.latencyMs);
  try {
    const started = performance.now();
    let url: string | null = listingUrl(source.url, 1);
    let pages = 0;
    let entities = 0;
    while (url !== null) {
      const response = await fetch(url);
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

/** How many partitions a run records; null on a run read as one stream. */
function partitionCount(run: SyncRun): number | null {
  const partitions = (run as SyncRun & { partitions?: unknown }).partitions;
  if (partitions === undefined || partitions === null || typeof partitions !== 'object') return null;
  return Object.keys(partitions).length;
}

interface PipelineRun {
  /** Null when the run was not split and not waited for. */
  readonly seconds: number | null;
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
    const input = { sourceId, mode: 'full' as const, ...{ partitions: PARTITIONED_SOURCE.partitions } };
    const { runId } = await startRun(env.deps, input);
    // A run that committed a page without recording partitions is read as one stream: it is not
    // what this phase measures, so it is left there (its resources are the phase's own).
    const unsplit = (run: SyncRun) => run.progress.pages >= 1 && partitionCount(run) === null;
    const run = await waitForRun(env.observer, runId, {
      everyMs: 1_000,
      until: (r) => isTerminal(r.state) || (!measureUnsplit && unsplit(r)),
    });
    const seconds = round((counter.lastEngineEndedAt - started) / 1_000, 3);
    const partitions = partitionCount(run);
    if (!isTerminal(run.state)) return { seconds: null, run, partitions };
    if (run.state !== 'succeeded' || run.progress.processed !== PARTITIONED_SOURCE.entities)
      throw new Error(`partitioned run ended ${run.state} with ${run.progress.processed} processed`);
    const items = await env.observer.items.listAll(sourceId);
    if (items.length !== PARTITIONED_SOURCE.entities)
      throw new Error(
        `partitioned run stored ${items.length} items, expected ${PARTITIONED_SOURCE.entities}`,
      );
    return { seconds, run, partitions };
  } finally {
    await env.stop();
    await source.stop();
  }
}

/**
 * The phase: the bare loop, then the partitioned run, then the same run without source latency
 * (the emulator's floor). A run the engine did not split is reported as unavailable, never timed
 * as if it were partitioned.
 */
export async function runPartitioned(endpoint: string): Promise<PartitionedResult> {
  const pages = Math.ceil(PARTITIONED_SOURCE.entities / PARTITIONED_SOURCE.perPage);
  const bare = await runPartitionedBare();
  const slow = await runPipelineOnce(endpoint, PARTITIONED_SOURCE.latencyMs, 'partitioned');
  const base = {
    source: { ...PARTITIONED_SOURCE, shape: 'github-issues (fake source)', pages },
    bareLoopSeconds: bare.seconds,
    workers: WORKERS,
  };
  if (slow.seconds === null || slow.partitions === null || slow.partitions < 2) {
    return {
      ...base,
      pipelineSeconds: null,
      partitionedSpeedup: null,
      partitions: slow.partitions,
      pages: null,
      entities: null,
      emulatorFloorSeconds: null,
      unavailable:
        'the engine read the run as one stream (it committed a page without recording partitions): partitioned runs are not available in this build',
      note: 'no partitioned numbers: the pipeline half needs the engine to split runs',
    };
  }
  const floor = await runPipelineOnce(endpoint, 0, 'partitioned-floor', true);
  if (floor.seconds === null) throw new Error('the floor run ended without a time');
  return {
    ...base,
    pipelineSeconds: slow.seconds,
    partitionedSpeedup: round(slow.seconds / bare.seconds, 3),
    partitions: slow.partitions,
    pages: slow.run.progress.pages,
    entities: slow.run.progress.processed,
    emulatorFloorSeconds: floor.seconds,
    unavailable: null,
    note:
      `pipeline: startRun → the finishing write of a full run split into ${slow.partitions} partitions, ` +
      `${WORKERS} in-process page workers on moto; bare loop: the same listing's ${pages} pages fetched one after ` +
      'the other with nothing stored; both against the fake source with the same latency on every page request',
  };
}
