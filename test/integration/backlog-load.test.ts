import { beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { isTerminal } from '../../lib/run/model.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

/*
 * A load test: 24 runs (`BACKLOG_RUNS`; 40 and more pass too) of a non-resumable mode (full), one source each, two workers,
 * and a reaper that sees every queued successor wait for minutes (the movable clock jumps one
 * minute, the reaper's cadence, before each pass; pages wait many passes). Before the handoff, each pass fenced and restarted the waiting runs.
 */

const RUNS = Number(process.env.BACKLOG_RUNS ?? 24);
const ENTITIES = 40;
const clock = movableClock();
// A busy worker beats often in real time, so a clock jump never makes a step that is merely
// slow on a loaded machine look silent: only pages waiting in the queue grow old.
const { engine, runtime, startFake } = useEngineWithFakes('backlog', { clock, heartbeatIntervalMs: 200 });
let fake: FakeSource;

beforeAll(async () => {
  fake = await startFake({ entities: ENTITIES, seed: 77 });
});

describe('a backlogged page queue under load', () => {
  it(`lets ${RUNS} full runs on two workers all succeed with 0 restarts and 0 dead letters while their pages wait minutes`, async () => {
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const sourceId = `backlog-${i}`;
      const { connector, config } = sourceOfShape(fake, 'rest-cursor', { pageSize: 20 });
      await putSource(engine.deps, sourceId, connector, config);
      runIds.push((await startRun(engine.deps, { sourceId, mode: 'full' })).runId);
    }

    // Every run the reaper judged waiting at least once (a union over passes: how many wait at
    // once depends on how far the two workers got while the runs were being started).
    const waitingSeen = new Set<string>();
    const deadline = Date.now() + 100_000;
    for (;;) {
      const runs = await Promise.all(runIds.map((id) => engine.deps.runs.require(id)));
      if (runs.every((r) => isTerminal(r.state)) || Date.now() > deadline) break;
      clock.advance(60_000);
      const report = await runtime.reapNow();
      for (const waiting of report.waiting) waitingSeen.add(waiting.runId);
      // Same-epoch re-sends and outbox re-publishes are allowed; fences and restarts are not.
      expect(
        report.actions.filter((a) => a.action !== 'resend' && a.action !== 'publish'),
        JSON.stringify(report.actions),
      ).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }

    const runs = await Promise.all(runIds.map((id) => engine.deps.runs.require(id)));
    expect(runs.map((r) => r.state)).toEqual(runIds.map(() => 'succeeded'));
    expect(runs.map((r) => r.restarts)).toEqual(runIds.map(() => 0));
    expect(runs.map((r) => r.epoch)).toEqual(runIds.map(() => 1));
    expect(runs.map((r) => r.progress.processed)).toEqual(runIds.map(() => ENTITIES));
    expect(runs.map((r) => r.errorCount)).toEqual(runIds.map(() => 0));
    for (const run of runs) {
      expect((await engine.deps.deadLetters.list(run.sourceId, {})).items).toEqual([]);
    }
    // The reaper did see runs waiting: the backlog was real, not absent.
    expect(waitingSeen.size).toBeGreaterThan(RUNS / 4);
  }, 150_000);
});
