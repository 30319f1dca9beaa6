import { afterEach, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { EngineDeps, StepPoint } from '../../lib/engine/index.js';
import { processPage, startRun } from '../../lib/engine/index.js';
import type { RunMode, SyncRun } from '../../lib/run/model.js';
import { RunFencedError } from '../../lib/store/errors.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { CrashHooks, movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

// Ten pages of 20: enough pages for every crash point, few enough writes to keep the file fast.
const ENTITIES = 200;
const PAGE_SIZE = 20;
const SILENCE = RELIABILITY.silenceThresholdMs + 1_000;
const clock = movableClock();
const hooks = new CrashHooks();
// The reaper is ticked by hand (runtime.reapNow), after the clock has been moved past the silence threshold.
const { engine, runtime, startFake } = useEngineWithFakes('crash', { clock, hooks });
let counter = 0;

afterEach(() => hooks.disarm());

async function newSource(): Promise<{ sourceId: string; fake: FakeSource }> {
  const fake = await startFake({ entities: ENTITIES, seed: 100 + counter });
  const sourceId = `crash-${++counter}`;
  const { connector, config } = sourceOfShape(fake, 'rest-cursor', { pageSize: PAGE_SIZE });
  await putSource(engine.deps, sourceId, connector, config);
  return { sourceId, fake };
}

/** Starts a run with a crash planned at `point` of `page`, and returns once the crash happened. */
async function startAndCrash(
  sourceId: string,
  mode: RunMode,
  point: StepPoint,
  page: number,
): Promise<SyncRun> {
  hooks.arm({ point, page });
  const crashed = hooks.nextCrash();
  const started = await startRun(engine.deps, { sourceId, mode });
  await crashed;
  return started;
}

/** Moves time past the silence threshold and runs one reaper pass. */
async function silenceThenReap() {
  clock.advance(SILENCE);
  return runtime.reapNow();
}

async function expectComplete(run: SyncRun, fake: FakeSource): Promise<void> {
  expect(run.state).toBe('succeeded');
  expect(run.progress.processed).toBe(ENTITIES);
  const items = await engine.deps.items.listAll(run.sourceId);
  const truth = fake.truth().entities;
  expect(items).toHaveLength(truth.length);
  const stored = new Map(items.map((i) => [i.entityId, i.version]));
  for (const entity of truth) expect(stored.get(entity.id)).toBe(entity.updatedAt);
  expect((await engine.deps.sources.require(run.sourceId)).activeRunId).toBeNull();
}

describe('a crash at each step boundary', () => {
  it.each([
    ['beforeFetch', 0],
    ['afterLoad', 1],
  ] as const)(
    'at %s: an incremental ordered run resumes from its checkpoint and re-fetches at most %i page',
    async (point, refetches) => {
      const { sourceId, fake } = await newSource();

      const started = await startAndCrash(sourceId, 'incremental', point, 4);
      const report = await silenceThenReap();
      const run = await waitForRun(engine.deps, started.runId);

      expect(report.actions).toContainEqual({ runId: started.runId, verdict: 'resumed', action: 'resume' });
      expect(run.resume.reason).toBe('resumed');
      expect(run.restarts).toBe(1);
      expect(run.epoch).toBe(2);
      await expectComplete(run, fake);
      expect(fake.stats().duplicatePageServes).toBe(refetches);
    },
  );

  it.each(['incremental', 'full'] as const)(
    'at afterCommit: a %s run gets its successor re-sent at the same epoch, spends no restart and re-fetches nothing',
    async (mode) => {
      const { sourceId, fake } = await newSource();

      const started = await startAndCrash(sourceId, mode, 'afterCommit', 4);
      const report = await silenceThenReap();
      const run = await waitForRun(engine.deps, started.runId);

      expect(report.actions).toContainEqual({
        runId: started.runId,
        verdict: 'send_unconfirmed',
        action: 'resend',
      });
      expect(run).toMatchObject({ epoch: 1, restarts: 0 });
      expect(run.resume.reason).toBe('fresh_start');
      await expectComplete(run, fake);
      expect(fake.stats().duplicatePageServes).toBe(0);
    },
  );

  it.each(['beforeFetch', 'afterLoad'] as const)(
    'at %s: a full run over a keyed stream resumes from its checkpoint, as an incremental one does, and ends complete',
    async (point) => {
      const { sourceId, fake } = await newSource();

      const started = await startAndCrash(sourceId, 'full', point, 4);
      await silenceThenReap();
      const run = await waitForRun(engine.deps, started.runId);

      expect(run.resume).toMatchObject({ reason: 'resumed', from: 'checkpoint' });
      expect(run.progress.pages).toBe(ENTITIES / PAGE_SIZE);
      await expectComplete(run, fake);
    },
  );
});

describe('a zombie worker', () => {
  it('paused past the silence threshold cannot heartbeat, commit, enqueue or finish after the reaper fenced it', async () => {
    const { sourceId, fake } = await newSource();
    const started = await startAndCrash(sourceId, 'incremental', 'beforeFetch', 3);
    const stalled = await engine.deps.runs.require(started.runId);

    // The zombie takes page 3 and freezes (no heartbeats, like a stopped process) after loading it.
    let release!: () => void;
    const frozen = new Promise<void>((resolve) => {
      release = resolve;
    });
    let paused = true;
    let reachedPause!: () => void;
    const atPause = new Promise<void>((resolve) => {
      reachedPause = resolve;
    });
    const chains = Object.create(engine.deps.chains) as EngineDeps['chains'];
    chains.heartbeat = async (...args) => (paused ? undefined : engine.deps.chains.heartbeat(...args));
    const zombie: EngineDeps = {
      ...engine.deps,
      chains,
      hooks: {
        async at(point) {
          if (point !== 'afterLoad') return;
          reachedPause();
          await frozen;
        },
      },
    };
    const zombieResult = processPage(zombie, {
      v: 1,
      runId: started.runId,
      sourceId,
      epoch: 1,
      page: 3,
      cursor: stalled.checkpoint!.cursor,
    });
    await atPause;

    const report = await silenceThenReap();
    expect(report.actions).toContainEqual({ runId: started.runId, verdict: 'resumed', action: 'resume' });
    const run = await waitForRun(engine.deps, started.runId);
    paused = false;
    release();

    expect(await zombieResult).toMatchObject({ outcome: 'stopped', reason: 'RunFencedError' });
    await expect(
      engine.deps.chains.heartbeat({ runId: started.runId }, 1, clock.now()),
    ).rejects.toBeInstanceOf(RunFencedError);
    const after = await engine.deps.runs.require(started.runId);
    expect(after).toEqual(run);
    await expectComplete(after, fake);
  });
});

describe('the freshness budget', () => {
  it('restarts a run from scratch when more than 6 h passed since its checkpoint', async () => {
    const { sourceId, fake } = await newSource();
    const started = await startAndCrash(sourceId, 'incremental', 'afterCommit', 3);

    clock.advance(RELIABILITY.checkpointFreshnessMs + 60_000);
    const report = await runtime.reapNow();
    const run = await waitForRun(engine.deps, started.runId);

    expect(report.actions).toContainEqual({
      runId: started.runId,
      verdict: 'checkpoint_stale',
      action: 'restart',
    });
    expect(run.resume).toMatchObject({ reason: 'checkpoint_stale', from: 'scratch' });
    await expectComplete(run, fake);
  });

  it('counts each stale restart, so a page lost after every commit ends the run failed with restart_limit', async () => {
    const { sourceId } = await newSource();
    hooks.arm({ point: 'afterCommit', page: 2, times: 100 });
    const started = await startRun(engine.deps, { sourceId, mode: 'incremental' });

    const verdicts: string[] = [];
    for (let pass = 0; pass <= RELIABILITY.maxRestartsPerRun; pass++) {
      await hooks.nextCrash();
      clock.advance(RELIABILITY.checkpointFreshnessMs + 60_000);
      const report = await runtime.reapNow();
      verdicts.push(...report.actions.filter((a) => a.runId === started.runId).map((a) => a.verdict));
    }
    const run = await waitForRun(engine.deps, started.runId);

    expect(verdicts).toEqual([
      ...Array(RELIABILITY.maxRestartsPerRun).fill('checkpoint_stale'),
      'restart_limit',
    ]);
    expect(run.state).toBe('failed');
    expect(run.failure?.reason).toBe('restart_limit');
    expect(run.failure?.message).toMatch(/older than the 6 h freshness budget/);
    expect(run.restarts).toBe(RELIABILITY.maxRestartsPerRun);
    expect((await engine.deps.sources.require(sourceId)).activeRunId).toBeNull();
  });

  it('ends the run source_unavailable, position kept and lock released, when a deferred page wakes past the budget', async () => {
    const { sourceId } = await newSource();
    const started = await startAndCrash(sourceId, 'incremental', 'afterCommit', 2);
    const stalled = await engine.deps.runs.require(started.runId);

    clock.advance(RELIABILITY.progressBudgetMs + 60_000);
    const woken = await processPage(engine.deps, {
      v: 1,
      runId: started.runId,
      sourceId,
      epoch: 1,
      page: 3,
      cursor: stalled.checkpoint!.cursor,
      deferred: true,
    });
    const run = await waitForRun(engine.deps, started.runId);

    expect(woken).toEqual({ outcome: 'failed', reason: 'source_unavailable' });
    expect(run.failure?.reason).toBe('source_unavailable');
    expect(run.checkpoint).toEqual(stalled.checkpoint);
    expect((await engine.deps.sources.require(sourceId)).activeRunId).toBeNull();
    const entries = await engine.deps.deadLetters.list(sourceId, { runId: started.runId });
    expect(entries.items).toContainEqual(
      expect.objectContaining({ kind: 'page', page: 3, ref: stalled.checkpoint!.cursor }),
    );
  });
});

describe('a source reconfigured while its run is down', () => {
  it('makes the reaper restart the run from scratch with params_changed', async () => {
    const { sourceId, fake } = await newSource();
    const started = await startAndCrash(sourceId, 'incremental', 'afterLoad', 3);

    const smaller = sourceOfShape(fake, 'rest-cursor', { pageSize: PAGE_SIZE / 2 });
    await putSource(engine.deps, sourceId, smaller.connector, smaller.config);
    const report = await silenceThenReap();
    const run = await waitForRun(engine.deps, started.runId);

    expect(report.actions).toContainEqual({
      runId: started.runId,
      verdict: 'params_changed',
      action: 'restart',
    });
    expect(run.resume.reason).toBe('params_changed');
    expect(run.progress.pages).toBe(ENTITIES / (PAGE_SIZE / 2));
    await expectComplete(run, fake);
  });
});

describe('a page that kills the worker every time', () => {
  it.each(['incremental', 'full'] as RunMode[])(
    'ends a %s run failed with restart_limit, the page in dead_letters, the lock released',
    async (mode) => {
      const { sourceId } = await newSource();
      hooks.arm({ point: 'afterLoad', page: 3, times: 100 });
      const started = await startRun(engine.deps, { sourceId, mode });

      for (let restart = 0; restart <= RELIABILITY.maxRestartsPerRun; restart++) {
        await hooks.nextCrash();
        await silenceThenReap();
      }
      const run = await waitForRun(engine.deps, started.runId);

      expect(run.state).toBe('failed');
      expect(run.failure?.reason).toBe('restart_limit');
      expect(run.resume.reason).toBe('restart_limit');
      expect(run.restarts).toBe(RELIABILITY.maxRestartsPerRun);
      const entries = await engine.deps.deadLetters.list(sourceId, { runId: started.runId });
      expect(entries.items).toContainEqual(
        expect.objectContaining({ kind: 'page', page: 3, ref: run.checkpoint!.cursor }),
      );
      expect((await engine.deps.sources.require(sourceId)).activeRunId).toBeNull();
    },
  );
});
