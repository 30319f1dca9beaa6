import { startRun } from '../lib/engine/index.js';
import type { RunMode } from '../lib/run/model.js';
import { type FakeSource, startFakeSource } from '../tools/fake-source/index.js';
import { THROUGHPUT_SOURCE } from './bare-loop.js';
import { type OpStats, RequestCounter } from './counter.js';
import { itemBytes } from './item-size.js';
import { type BenchEnv, ONE_STREAM, putSource, round, setUpBench, waitForRun } from './setup.js';

/** In-process page workers of the pipeline phase (a single ordered stream uses one at a time). */
export const PIPELINE_WORKERS = 2;

/** One run through the pipeline: its wall time and everything the request counter saw. */
export interface PipelineResult {
  readonly mode: RunMode;
  readonly pipelineSeconds: number;
  readonly pages: number;
  readonly entities: number;
  readonly workers: number;
  /** Requests by `caller:Service.Operation`, from the start of the run to its end. */
  readonly ops: Record<string, OpStats>;
  /** Page handler durations (receive → delete), ms. */
  readonly handler: {
    readonly count: number;
    readonly meanMs: number;
    readonly p50Ms: number;
    readonly p95Ms: number;
  };
  readonly duplicatePageServes: number;
  /** When this run was measured (ISO 8601). */
  readonly measuredAt: string;
  /** Mean size of the stored items afterwards, bytes, by DynamoDB's rules. */
  readonly meanItemBytes?: number;
}

/** The pipeline phase: a first load, then the same unchanged entities read again twice. */
export interface PipelinePhases {
  /** The first `full` run into empty tables. */
  readonly firstLoad: PipelineResult;
  /** A second `full` run over the same, unchanged entities. */
  readonly unchangedReread: PipelineResult;
  /** A `reconciliation` run over the same, unchanged entities. */
  readonly reconciliationUnchanged: PipelineResult;
}

/**
 * Full runs of the throughput source through the whole local pipeline — LocalRuntime pollers,
 * the page step, version-guarded item loads, conditional commits, the next page re-enqueued —
 * each timed from `startRun` until the run is terminal, with every AWS request counted and billed
 * by item size. The same tables then see a second `full` run and a reconciliation run of the same
 * unchanged entities: what keeping a copy up to date costs when nothing changed.
 */
export async function runPipeline(
  endpoint: string,
  entities: number = THROUGHPUT_SOURCE.entities,
): Promise<PipelinePhases> {
  const counter = new RequestCounter();
  const env = await setUpBench(endpoint, 'pipeline', { counter });
  const source = await startFakeSource({ ...THROUGHPUT_SOURCE, entities, profile: 'none' });
  try {
    await putSource(env.observer, 'bench-pipeline', source.url);
    env.runtime({ workers: PIPELINE_WORKERS }).start();
    const run = (mode: RunMode) => runOnce(env, counter, source, 'bench-pipeline', mode, entities);
    const firstLoad = await run('full');
    const unchangedReread = await run('full');
    const reconciliationUnchanged = await run('reconciliation');
    return { firstLoad, unchangedReread, reconciliationUnchanged };
  } finally {
    await env.stop();
    await source.stop();
  }
}

/**
 * A first load of entities of realistic size: GitHub issues with bodies are 1–4 KB, so each
 * entity's body is grown to `bodyBytes` before the run.
 */
export async function runSizedLoad(
  endpoint: string,
  entities: number,
  bodyBytes: number,
): Promise<PipelineResult> {
  const counter = new RequestCounter();
  const env = await setUpBench(endpoint, 'sized', { counter });
  const source = await startFakeSource({ ...THROUGHPUT_SOURCE, entities, profile: 'none' });
  try {
    source.control.resize(
      Array.from({ length: entities }, (_, i) => i + 1),
      bodyBytes,
    );
    await putSource(env.observer, 'bench-sized', source.url);
    env.runtime({ workers: PIPELINE_WORKERS }).start();
    return await runOnce(env, counter, source, 'bench-sized', 'full', entities);
  } finally {
    await env.stop();
    await source.stop();
  }
}

async function runOnce(
  env: BenchEnv,
  counter: RequestCounter,
  source: FakeSource,
  sourceId: string,
  mode: RunMode,
  expected: number = THROUGHPUT_SOURCE.entities,
): Promise<PipelineResult> {
  counter.reset();
  const servedBefore = source.stats().duplicatePageServes;
  const measuredAt = new Date().toISOString();
  const started = performance.now();
  const { runId } = await startRun(env.deps, { sourceId, mode, ...ONE_STREAM });
  // Polled slowly (moto serializes DynamoDB requests, so watching must not slow the run); the
  // run's end is taken from its last engine request, the finishing transaction.
  const run = await waitForRun(env.observer, runId, { everyMs: 1_000 });
  const pipelineSeconds = round((counter.lastEngineEndedAt - started) / 1_000, 3);
  // Let the last message's delete land before the counts are read.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const ops = counter.snapshot();
  const handlerMs = [...counter.handlerMs];

  const items = await env.observer.items.listAll(sourceId);
  if (run.state !== 'succeeded' || run.progress.processed !== expected)
    throw new Error(`${mode} run ended ${run.state} with ${run.progress.processed} processed`);
  if (items.length !== expected)
    throw new Error(`${mode} run: ${items.length} items stored, expected ${expected}`);
  return {
    mode,
    pipelineSeconds,
    pages: run.progress.pages,
    entities: run.progress.processed,
    workers: PIPELINE_WORKERS,
    ops,
    handler: summarize(handlerMs),
    duplicatePageServes: source.stats().duplicatePageServes - servedBefore,
    measuredAt,
    meanItemBytes: round(items.reduce((sum, item) => sum + itemBytes({ ...item }), 0) / items.length, 0),
  };
}

function summarize(durations: number[]): PipelineResult['handler'] {
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const mean = sorted.reduce((sum, d) => sum + d, 0) / Math.max(1, sorted.length);
  return {
    count: sorted.length,
    meanMs: round(mean, 1),
    p50Ms: round(at(0.5), 1),
    p95Ms: round(at(0.95), 1),
  };
}
