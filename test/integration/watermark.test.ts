import { afterEach, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { StepPoint } from '../../lib/engine/index.js';
import { startRun } from '../../lib/engine/index.js';
import type { SyncRun } from '../../lib/run/model.js';
import type { FakeSource, LiveOptions } from '../../tools/fake-source/index.js';
import { CrashHooks, movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * The watermark belongs to the stream it was read from, a reconfiguration is noticed from the
 * first page on, and a run killed while its source is edited resumes from its key exactly.
 */

const clock = movableClock();
const hooks = new CrashHooks();
const { engine, runtime, startFake, runToEnd } = useEngineWithFakes('watermark', { clock, hooks });
let counter = 0;
afterEach(() => hooks.disarm());

async function fake(entities: number, startAt: string, live?: LiveOptions): Promise<FakeSource> {
  return startFake({ entities, seed: 300 + counter++, startAt, latencyMs: 0, live });
}

function github(source: FakeSource, repo = 'one', perPage = 20) {
  return sourceOfShape(source, 'github', { pageSize: perPage, config: { repo } }).config;
}

describe('the watermark belongs to the stream', () => {
  it('a source pointed at another repository starts without the old watermark', async () => {
    const recent = await fake(60, '2025-06-01T00:00:00.000Z');
    const older = await fake(30, '2024-01-01T00:00:00.000Z');
    const sourceId = `wm-${counter}`;
    await putSource(engine.deps, sourceId, 'github-issues', github(recent));
    await runToEnd(sourceId, 'incremental');

    await putSource(engine.deps, sourceId, 'github-issues', github(older, 'two'));
    const run = await runToEnd(sourceId, 'incremental');

    expect(run.params.since).toBeNull();
    expect(run.progress.processed).toBe(30);
    expect((await compareWithTruth(engine.deps, sourceId, older, 'github')).missing).toEqual([]);
  });

  it('keeps the watermark when only how the stream is read changes (page size)', async () => {
    const source = await fake(60, '2025-06-01T00:00:00.000Z');
    const sourceId = `wm-${counter}`;
    await putSource(engine.deps, sourceId, 'github-issues', github(source));
    await runToEnd(sourceId, 'incremental');
    const watermark = (await engine.deps.sources.require(sourceId)).watermark;

    await putSource(engine.deps, sourceId, 'github-issues', github(source, 'one', 50));
    const run = await runToEnd(sourceId, 'incremental');

    expect(watermark).toBe(source.truth().entities.at(-1)!.updatedAt);
    expect(run.params.watermark).toBe(watermark);
    expect(run.progress.processed).toBeLessThan(10);
  });
});

describe('a source’s own lookback', () => {
  it('an incremental run asks since = watermark − the source’s lookback, and a changed lookback keeps the watermark', async () => {
    const source = await fake(60, '2025-06-01T00:00:00.000Z');
    const sourceId = `wm-${counter}`;
    await putSource(engine.deps, sourceId, 'github-issues', github(source));
    await runToEnd(sourceId, 'incremental');
    const watermark = (await engine.deps.sources.require(sourceId)).watermark!;

    // Rows committed by long transactions appear up to ten minutes after their timestamp.
    await putSource(engine.deps, sourceId, 'github-issues', {
      ...github(source),
      watermarkLookbackSeconds: 600,
    });
    const run = await runToEnd(sourceId, 'incremental');

    expect(run.params.watermark).toBe(watermark);
    expect(run.params.since).toBe(new Date(Date.parse(watermark) - 600_000).toISOString());
    // The fake's entities are a second apart: all 60 lie within the ten minutes.
    expect(run.progress.processed).toBe(60);
  });
});

async function startAndCrash(sourceId: string, point: StepPoint, page: number): Promise<SyncRun> {
  hooks.arm({ point, page });
  const crashed = hooks.nextCrash();
  const started = await startRun(engine.deps, { sourceId, mode: 'incremental' });
  await crashed;
  return started;
}

describe('a run that stops', () => {
  it('restarts with params_changed, and the new config, when its source was reconfigured before its first commit', async () => {
    const first = await fake(40, '2025-06-01T00:00:00.000Z');
    const second = await fake(25, '2024-01-01T00:00:00.000Z');
    const sourceId = `wm-${counter}`;
    await putSource(engine.deps, sourceId, 'github-issues', github(first));
    const started = await startAndCrash(sourceId, 'beforeFetch', 1);

    await putSource(engine.deps, sourceId, 'github-issues', github(second, 'two'));
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    await runtime.reapNow();
    const run = await waitForRun(engine.deps, started.runId);

    expect(run.resume.reason).toBe('params_changed');
    expect(run.state).toBe('succeeded');
    expect((run.params.config as { repo: string }).repo).toBe('two');
    expect(run.progress.processed).toBe(25);
  });

  it('resumes exactly from its key when killed mid-way while the source is being edited', async () => {
    const source = await fake(300, '2024-01-01T00:00:00.000Z', {
      touchesPerPage: 2,
      addsPerPage: 1,
      deletesPerPage: 1,
    });
    const sourceId = `wm-${counter}`;
    await putSource(engine.deps, sourceId, 'github-issues', github(source));
    const started = await startAndCrash(sourceId, 'afterLoad', 6);

    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    await runtime.reapNow();
    const resumed = await waitForRun(engine.deps, started.runId, undefined, 120_000);
    source.control.setLive(null);
    const quiet = await runToEnd(sourceId, 'incremental');

    expect(resumed.resume.reason).toBe('resumed');
    expect(resumed.state).toBe('succeeded');
    expect(quiet.state).toBe('succeeded');
    const comparison = await compareWithTruth(engine.deps, sourceId, source, 'github');
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);
  });
});
