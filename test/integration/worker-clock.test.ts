import { ListSchedulesCommand } from '@aws-sdk/client-scheduler';
import { beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { movableClock } from '../support/crash.js';
import { fastRetry, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

/*
 * A local runtime on a movable clock shares it with its worker processes: hours can pass for a
 * worker that really is another process — its stamps, its deferrals, and their wake-ups (fired by
 * the runtime's schedule firer on the same clock, never by SQS delays on the wall clock).
 */

const HOUR = 3_600_000;
const clock = movableClock();
const { engine, runtime, startFake } = useEngineWithFakes('workerclock', {
  clock,
  retry: { ...fastRetry(), now: () => clock.now() },
  maxQueueDelayMs: 0,
  workers: 0,
  runtime: { processWorkers: 1, scheduleIntervalMs: 200, workerClock: clock },
});
let fake: FakeSource;

beforeAll(async () => {
  fake = await startFake({ entities: 90, seed: 17 });
});

describe('a worker process under a runtime on a movable clock', () => {
  it('stamps its work with the runtime’s time, also after the clock moved', async () => {
    clock.advance(3 * HOUR);
    await runtime.syncWorkerClocks();
    const { connector, config } = sourceOfShape(fake, 'rest-cursor', { pageSize: 30 });
    await putSource(engine.deps, 'stamped', connector, config);
    const before = clock.now();

    const { runId } = await startRun(engine.deps, { sourceId: 'stamped', mode: 'full' });
    const run = await waitForRun(engine.deps, runId, undefined, 30_000);

    expect(run.state).toBe('succeeded');
    expect(run.startedAt).toBeGreaterThanOrEqual(before);
    expect(run.checkpoint!.at).toBeGreaterThanOrEqual(before);
    expect(run.finishedAt).toBeLessThanOrEqual(clock.now());
  });

  it('defers past an hour-long Retry-After on a schedule that wakes when the runtime’s clock gets there', async () => {
    clock.advance(5 * HOUR);
    await runtime.syncWorkerClocks();
    // Each listing request is throttled once for an hour, then answered.
    fake.control.setProfile({ rate429: 1, retryAfterSeconds: 3_600, maxConsecutiveFailures: 1 });
    const { connector, config } = sourceOfShape(fake, 'rest-cursor', { pageSize: 90 });
    await putSource(engine.deps, 'throttled', connector, config);
    const before = clock.now();

    // One stream (no planning request): the page's own fetch meets the Retry-After.
    const { runId } = await startRun(engine.deps, { sourceId: 'throttled', mode: 'full', partitions: 1 });
    const deferred = await waitForRun(engine.deps, runId, (r) => r.deferredUntil !== null, 30_000);

    expect(deferred.deferredUntil).toBeGreaterThanOrEqual(before + HOUR);
    const { Schedules = [] } = await engine.aws.clients.scheduler.send(
      new ListSchedulesCommand({ GroupName: engine.aws.names.scheduleGroup, NamePrefix: `defer-${runId}` }),
    );
    expect(Schedules).toHaveLength(1);
    // Nothing wakes it before its time.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await engine.deps.runs.require(runId)).toMatchObject({ state: 'running', nextPage: 1 });

    clock.advance(deferred.deferredUntil! - clock.now() + 1_000);
    await runtime.syncWorkerClocks();
    const run = await waitForRun(engine.deps, runId, undefined, 30_000);

    expect(run).toMatchObject({ state: 'succeeded', restarts: 0, progress: { processed: 90 } });
    expect(run.finishedAt).toBeGreaterThanOrEqual(deferred.deferredUntil!);
    fake.control.setProfile('none');
  });
});
