import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startRun } from '../lib/engine/index.js';
import { startFakeSource } from '../tools/fake-source/index.js';
import { THROUGHPUT_SOURCE } from './bare-loop.js';
import { ONE_STREAM, putSource, round, secondsSince, setUpBench, sleep } from './setup.js';

/** Result of one {@link runMemory} size. */
export interface MemoryResult {
  readonly entities: number;
  readonly pages: number;
  readonly seconds: number;
  /** Highest resident set of the worker process during the run, MB. */
  readonly peakRssMb: number;
  /** Resident set when the first page was committed, MB: the baseline after start-up. */
  readonly rssAfterFirstPageMb: number;
  /** Highest sample in the first and the last fifth of the run, MB: growth shows as a gap. */
  readonly firstFifthPeakMb: number;
  readonly lastFifthPeakMb: number;
}

interface RssSample {
  readonly rssMb: number;
  /** The kernel's high-water mark (Linux), MB; catches peaks between samples. */
  readonly hwmMb: number | null;
}

/**
 * The resident set of a process, read from /proc on Linux (VmRSS and the high-water mark VmHWM)
 * and from `ps` elsewhere — from outside, so the worker process needs no instrumentation.
 */
export function sampleRss(pid: number): RssSample | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    return { rssMb: kb('VmRSS') / 1_024, hwmMb: kb('VmHWM') / 1_024 };
  } catch {
    try {
      const rssKb = Number(
        execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim(),
      );
      return Number.isFinite(rssKb) && rssKb > 0 ? { rssMb: rssKb / 1_024, hwmMb: null } : null;
    } catch {
      return null;
    }
  }
}

/**
 * A full run of `entities` through one child worker process (a real `node` process, as a Lambda
 * instance is), sampling its resident set every 250 ms. Memory of a page worker must depend on
 * the page, never on how many pages the run has had.
 */
export async function runMemory(endpoint: string, entities: number): Promise<MemoryResult> {
  const env = await setUpBench(endpoint, `mem${entities}`);
  const source = await startFakeSource({ ...THROUGHPUT_SOURCE, entities, profile: 'none' });
  try {
    await putSource(env.observer, 'bench-memory', source.url);
    const runtime = env.runtime({ workers: 0, processWorkers: 1, workerEnv: env.workerEnv }).start();
    const started = performance.now();
    const { runId } = await startRun(env.deps, { sourceId: 'bench-memory', mode: 'full', ...ONE_STREAM });
    const samples: { page: number; rssMb: number }[] = [];
    let peakMb = 0;
    let pid: number | undefined;
    let lastRead = 0;
    let run = await env.observer.runs.require(runId);
    while (run.state === 'queued' || run.state === 'running') {
      const pids = runtime.workerPids();
      if (pid !== undefined && pids[0] !== pid)
        throw new Error('memory phase: the worker process was replaced');
      pid = pids[0];
      const sample = pid === undefined ? null : sampleRss(pid);
      if (sample) {
        peakMb = Math.max(peakMb, sample.rssMb, sample.hwmMb ?? 0);
        samples.push({ page: run.progress.pages, rssMb: sample.rssMb });
      }
      await sleep(250);
      // Reading the run costs an emulator request: once a second is enough to place samples.
      if (performance.now() - lastRead > 1_000) {
        run = await env.observer.runs.require(runId);
        lastRead = performance.now();
      }
    }
    const seconds = secondsSince(started);
    if (run.state !== 'succeeded' || run.progress.processed !== entities)
      throw new Error(`memory phase: run ended ${run.state} with ${run.progress.processed} processed`);
    const pages = run.progress.pages;
    const peakWhere = (from: number, to: number) =>
      Math.max(0, ...samples.filter((s) => s.page >= from && s.page < to).map((s) => s.rssMb));
    return {
      entities,
      pages,
      seconds,
      peakRssMb: round(peakMb, 1),
      rssAfterFirstPageMb: round(samples.find((s) => s.page >= 1)?.rssMb ?? 0, 1),
      firstFifthPeakMb: round(peakWhere(1, pages / 5), 1),
      lastFifthPeakMb: round(peakWhere((4 * pages) / 5, pages + 1), 1),
    };
  } finally {
    await env.stop();
    await source.stop();
  }
}
