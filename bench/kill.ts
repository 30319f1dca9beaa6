import { RELIABILITY } from '../lib/config/constants.js';
import { startRun } from '../lib/engine/index.js';
import { startFakeSource } from '../tools/fake-source/index.js';
import { THROUGHPUT_SOURCE } from './bare-loop.js';
import { movableClock, ONE_STREAM, putSource, setUpBench, sleep, waitForRun } from './setup.js';

/** Entities of the kill phase: 30 pages, the worker dies at about page 15. */
export const KILL_ENTITIES = 3_000;

/** Result of {@link runKill}. */
export interface KillResult {
  readonly pagesRefetchedAfterKill: number;
  readonly entities: number;
  readonly pages: number;
  /** Committed pages when the SIGKILL was sent. */
  readonly killedAtPage: number;
  /** Pages the source had served when the SIGKILL was sent. */
  readonly pagesFetchedAtKill: number;
  /** The kill landed between a page's fetch and its commit (the case that costs a re-fetch). */
  readonly killedMidPage: boolean;
  readonly reaperActions: readonly { readonly verdict: string; readonly action: string }[];
  readonly resumeReason: string;
  readonly state: string;
  readonly storedItems: number;
}

/**
 * An incremental run with one child worker process, SIGKILLed at about half its pages. The
 * in-process reaper, on a clock moved past the 90 s silence threshold, must resume it from the
 * checkpoint; the fake source counts every page it serves more than once.
 */
export async function runKill(endpoint: string): Promise<KillResult> {
  const clock = movableClock();
  const env = await setUpBench(endpoint, 'kill', { clock });
  const source = await startFakeSource({ ...THROUGHPUT_SOURCE, entities: KILL_ENTITIES, profile: 'none' });
  try {
    await putSource(env.observer, 'bench-kill', source.url);
    const runtime = env.runtime({ workers: 0, processWorkers: 1, workerEnv: env.workerEnv }).start();
    const totalPages = KILL_ENTITIES / THROUGHPUT_SOURCE.pageSize;
    const { runId } = await startRun(env.deps, {
      sourceId: 'bench-kill',
      mode: 'incremental',
      ...ONE_STREAM,
    });
    const half = await waitForRun(env.observer, runId, {
      until: (r) => r.progress.pages >= totalPages / 2,
      everyMs: 100,
    });
    // Kill mid-page, the costly case: the next page has been served and is being loaded.
    const fetched = () => Object.keys(source.stats().pagesServed).length;
    while (fetched() <= half.progress.pages) await sleep(10);
    const [pid] = runtime.workerPids();
    if (!pid) throw new Error('kill phase: no worker process to kill');
    process.kill(pid, 'SIGKILL');
    const pagesFetchedAtKill = fetched();
    await sleep(200);
    const atKill = await env.observer.runs.require(runId);

    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    const report = await runtime.reapNow();
    const run = await waitForRun(env.observer, runId, { everyMs: 500 });
    const storedItems = (await env.observer.items.listAll('bench-kill')).length;
    const actions = report.actions
      .filter((a) => a.runId === runId)
      .map(({ verdict, action }) => ({ verdict, action }));
    if (
      run.state !== 'succeeded' ||
      run.progress.processed !== KILL_ENTITIES ||
      storedItems !== KILL_ENTITIES
    )
      throw new Error(
        `kill phase: run ended ${run.state}, ${run.progress.processed} processed, ${storedItems} stored`,
      );
    return {
      pagesRefetchedAfterKill: source.stats().duplicatePageServes,
      entities: run.progress.processed,
      pages: run.progress.pages,
      killedAtPage: atKill.progress.pages,
      pagesFetchedAtKill,
      killedMidPage: pagesFetchedAtKill > atKill.progress.pages,
      reaperActions: actions,
      resumeReason: run.resume.reason,
      state: run.state,
      storedItems,
    };
  } finally {
    await env.stop();
    await source.stop();
  }
}
