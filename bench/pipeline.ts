import { startRun } from '../lib/engine/index.js';
import { startFakeSource } from '../tools/fake-source/index.js';
import { THROUGHPUT_SOURCE } from './bare-loop.js';
import { type OpStats, RequestCounter } from './counter.js';
import { ONE_STREAM, putSource, round, setUpBench, waitForRun } from './setup.js';

/** In-process page workers of the pipeline phase (a single ordered stream uses one at a time). */
export const PIPELINE_WORKERS = 2;

/** Result of {@link runPipeline}: the wall time and everything the request counter saw. */
export interface PipelineResult {
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
}

/**
 * A full run of the throughput source through the whole local pipeline — LocalRuntime pollers,
 * the page step, version-guarded item loads, conditional commits, the next page re-enqueued —
 * timed from `startRun` until the run is terminal, with every AWS request counted.
 */
export async function runPipeline(endpoint: string): Promise<PipelineResult> {
  const counter = new RequestCounter();
  const env = await setUpBench(endpoint, 'pipeline', { counter });
  const source = await startFakeSource({ ...THROUGHPUT_SOURCE, profile: 'none' });
  try {
    await putSource(env.observer, 'bench-pipeline', source.url);
    env.runtime({ workers: PIPELINE_WORKERS }).start();
    counter.reset();
    const started = performance.now();
    const { runId } = await startRun(env.deps, { sourceId: 'bench-pipeline', mode: 'full', ...ONE_STREAM });
    // Polled slowly (moto serializes DynamoDB requests, so watching must not slow the run); the
    // run's end is taken from its last engine request, the finishing transaction.
    const run = await waitForRun(env.observer, runId, { everyMs: 1_000 });
    const pipelineSeconds = round((counter.lastEngineEndedAt - started) / 1_000, 3);
    // Let the last message's delete land before the counts are read.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const ops = counter.snapshot();
    const handlerMs = [...counter.handlerMs];

    const items = await env.observer.items.listAll('bench-pipeline');
    if (run.state !== 'succeeded' || run.progress.processed !== THROUGHPUT_SOURCE.entities)
      throw new Error(`pipeline run ended ${run.state} with ${run.progress.processed} processed`);
    if (items.length !== THROUGHPUT_SOURCE.entities)
      throw new Error(`pipeline stored ${items.length} items, expected ${THROUGHPUT_SOURCE.entities}`);
    return {
      pipelineSeconds,
      pages: run.progress.pages,
      entities: run.progress.processed,
      workers: PIPELINE_WORKERS,
      ops,
      handler: summarize(handlerMs),
      duplicatePageServes: source.stats().duplicatePageServes,
    };
  } finally {
    await env.stop();
    await source.stop();
  }
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
