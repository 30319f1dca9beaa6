import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { RELIABILITY } from '../../lib/config/constants.js';
import { startRun } from '../../lib/engine/index.js';
import type { RunEvent } from '../../lib/run/run-events.js';
import { apiOver, callApi } from '../support/api.js';
import { CrashHooks, movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * A run's story as a user reads it (`GET …/runs/{runId}/events`), told by the engine through the
 * whole pipeline: a crash and the reaper's resume, a split into partitions, a cancel.
 */
const SILENCE = RELIABILITY.silenceThresholdMs + 1_000;
const clock = movableClock();
const hooks = new CrashHooks();
const { engine, runtime, startFake } = useEngineWithFakes('run-story', {
  workers: 2,
  clock,
  hooks,
  env: { MAX_PARTITIONS_PER_RUN: '1', MIN_ENTITIES_PER_PARTITION: '50' },
});
let api: ApiDeps;
let counter = 0;

async function newSource(shape: 'rest-cursor' | 'github', entities: number, pageSize?: number) {
  const fake = await startFake({ entities, seed: 7_300 + counter, latencyMs: 0 });
  const sourceId = `story-${++counter}`;
  const { connector, config } = sourceOfShape(fake, shape, pageSize ? { pageSize } : {});
  await putSource(engine.deps, sourceId, connector, config);
  return { sourceId, fake };
}

async function storyOf(sourceId: string, runId: string): Promise<RunEvent[]> {
  api ??= apiOver(engine);
  const events: RunEvent[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : '?limit=3';
    const answer = await callApi(api, 'GET', `/sources/${sourceId}/runs/${runId}/events${query}`);
    expect(answer.status).toBe(200);
    expect(answer.json.dropped).toBe(0);
    events.push(...answer.json.items);
    cursor = answer.json.nextCursor;
  } while (cursor);
  return events;
}

describe('a run’s story', () => {
  it('tells a crashed run’s start, its resume with verdict and epoch, its pages in bulk and its end', async () => {
    const { sourceId } = await newSource('rest-cursor', 200, 10);
    hooks.arm({ point: 'beforeFetch', page: 4 });
    const crashed = hooks.nextCrash();
    const started = await startRun(engine.deps, { sourceId, mode: 'incremental' });
    await crashed;
    clock.advance(SILENCE);
    await runtime.reapNow();
    const run = await waitForRun(engine.deps, started.runId);
    expect(run).toMatchObject({ state: 'succeeded', epoch: 2 });

    const story = await storyOf(sourceId, run.runId);
    expect(story.map((e) => `${e.type}@${e.epoch}`)).toEqual([
      'started@1',
      'resumed@2',
      'pages@2',
      'pages@2',
      'ended@2',
    ]);
    expect(story.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(story[0]?.detail).toEqual({ mode: 'incremental', trigger: 'api', verdict: 'fresh_start' });
    expect(story[1]?.detail).toEqual({ verdict: 'resumed', from: 'checkpoint', previousEpoch: 1 });
    expect(story[2]?.detail).toEqual({ partition: null, throughPage: 10, pages: 10, processed: 100 });
    expect(story[3]?.detail).toMatchObject({ throughPage: 20, processed: 200 });
    expect(story[4]?.detail).toEqual({
      state: 'succeeded',
      failure: null,
      processed: 200,
      deadLetters: 0,
      total: run.outcome?.total ?? null,
    });
  }, 60_000);

  it('tells a split: the plan, each partition’s end, and the end of the run', async () => {
    const { sourceId } = await newSource('github', 300);
    const started = await startRun(engine.deps, { sourceId, mode: 'full', partitions: 3 });
    const run = await waitForRun(engine.deps, started.runId);
    expect(run.state).toBe('succeeded');

    const story = await storyOf(sourceId, run.runId);
    expect(story[0]?.type).toBe('started');
    expect(story[1]).toMatchObject({ type: 'partition_planned', detail: { partitions: 3 } });
    const ends = story.filter((e) => e.type === 'partition_ended');
    expect(ends.map((e) => e.type === 'partition_ended' && e.detail.partition).sort()).toEqual([0, 1, 2]);
    expect(story.at(-1)).toMatchObject({ type: 'ended', detail: { state: 'succeeded', processed: 300 } });
    // "N of M" keeps the source's M: the plan's count is the source's, and the outcome keeps it.
    const planned = story[1]?.type === 'partition_planned' ? story[1].detail.total : undefined;
    expect(planned).toBe(300);
    expect(run.outcome?.total).toBe(300);
    expect(story.at(-1)?.detail).toMatchObject({ total: 300 });
  }, 90_000);

  it('tells a cancel, with who asked, and the end it made', async () => {
    const { sourceId } = await newSource('rest-cursor', 200, 10);
    hooks.arm({ point: 'beforeFetch', page: 2 });
    const crashed = hooks.nextCrash();
    const started = await startRun(engine.deps, { sourceId, mode: 'full' });
    await crashed;
    api ??= apiOver(engine);
    const answer = await callApi(api, 'POST', `/sources/${sourceId}/runs/${started.runId}/cancel`, {});
    expect(answer.status).toBe(200);

    const story = await storyOf(sourceId, started.runId);
    expect(story.map((e) => e.type)).toEqual(['started', 'cancelled', 'ended']);
    expect(story[2]?.detail).toMatchObject({ state: 'cancelled', processed: 10 });
  }, 60_000);

  it('answers 404 for a run of another source, as for a run that does not exist', async () => {
    const { sourceId } = await newSource('rest-cursor', 20, 10);
    const other = await newSource('rest-cursor', 20, 10);
    const started = await startRun(engine.deps, { sourceId, mode: 'full' });
    await waitForRun(engine.deps, started.runId);
    api ??= apiOver(engine);
    const answer = await callApi(api, 'GET', `/sources/${other.sourceId}/runs/${started.runId}/events`);
    expect(answer.status).toBe(404);
  }, 60_000);
});
