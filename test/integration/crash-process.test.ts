import { beforeAll, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { startRun } from '../../lib/engine/index.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

const clock = movableClock();
const { engine, runtime, startFake } = useEngineWithFakes('sigkill', {
  clock,
  workers: 0,
  runtime: { processWorkers: 1 },
});
let fake: FakeSource;

beforeAll(async () => {
  fake = await startFake({ entities: 1_000, seed: 9, latencyMs: 400 });
});

describe('a worker process killed with SIGKILL mid-page', () => {
  it('is recovered by the reaper and the run ends complete', async () => {
    const { connector, config } = sourceOfShape(fake, 'rest-cursor', { pageSize: 100 });
    await putSource(engine.deps, 'killed', connector, config);
    const started = await startRun(engine.deps, { sourceId: 'killed', mode: 'incremental' });
    // Mid-page: a worker has taken page 4 or later (its claim cleared the handoff) and is in its
    // 400 ms fetch. Killing it between a commit and the send's confirmation would be a lost
    // successor instead, which the reaper re-sends (crash-recovery.test.ts covers that).
    await waitForRun(engine.deps, started.runId, (r) => r.progress.pages >= 3 && r.handoff === null, 60_000);

    const [pid] = runtime.workerPids();
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const killedAt = await engine.deps.runs.require(started.runId);
    expect(killedAt.state).toBe('running');

    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    const report = await runtime.reapNow();
    const run = await waitForRun(engine.deps, started.runId);

    expect(runtime.workerPids()).not.toContain(pid);
    expect(report.actions).toContainEqual({ runId: started.runId, verdict: 'resumed', action: 'resume' });
    expect(run.state).toBe('succeeded');
    expect(run.resume.reason).toBe('resumed');
    expect(run.progress.processed).toBe(1_000);
    const items = await engine.deps.items.listAll('killed');
    expect(items).toHaveLength(1_000);
    expect(fake.stats().duplicatePageServes).toBeLessThanOrEqual(1);
  });
});
