import { describe, expect, it } from 'vitest';
import { RETRY_CONCURRENCY } from '../../lib/config/constants.js';
import { SharedQuota } from '../../tools/fake-source/index.js';
import { fakeRestConfig, fastRetry, putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * Reconciliation's tombstone slices never count a confirmation they did not make: when the
 * credential's rate budget is spent, the confirmations that must wait are deferred like pages,
 * and the run tombstones every confirmed absence before it succeeds.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('tombslices', {
  heartbeatIntervalMs: 500,
  // Real sleeps: a budget wait slept in the invocation is trusted to have served its time.
  retry: fastRetry(1),
  // Budget waits longer than this are deferred through the queue, so a 2 s window exercises it.
  maxInlineBudgetWaitMs: 200,
});

describe('a tombstone slice under a spent rate budget', () => {
  it('defers the confirmations that must wait, and tombstones every deleted issue', async () => {
    const fake = await startFake({
      entities: 30,
      seed: 1_900,
      latencyMs: 0,
      quota: new SharedQuota({ limit: 4, windowSeconds: 2 }),
    });
    const sourceId = 'tomb-budget';
    const { connector, config } = sourceOfShape(fake, 'github', { pageSize: 10 });
    await putSource(engine.deps, sourceId, connector, config);
    expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');
    const deleted = [3, 8, 13, 17, 22, 26, 29];
    fake.control.delete(deleted);

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({
      state: 'succeeded',
      errorCount: 0,
      progress: { tombstoned: deleted.length },
    });
    expect(await compareWithTruth(engine.deps, sourceId, fake, 'github')).toMatchObject({
      notTombstoned: [],
      wronglyTombstoned: [],
    });
  });
});

describe('a tombstone slice of slow confirmations', () => {
  it('asks in concurrent waves of at most RETRY_CONCURRENCY, so its worst case is one request’s, not the sum', async () => {
    // No `latencyMs` option: it would override the profile's latency set below.
    const fake = await startFake({ entities: 40, seed: 1_901 });
    const sourceId = 'tomb-waves';
    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 20 }));
    expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');
    const deleted = fake
      .truth()
      .entities.slice(5, 15)
      .map((e) => e.id);
    fake.control.delete(deleted);
    fake.control.setProfile({ perPathOverrides: { '/records/*': { latencyMs: 300 } } });
    fake.control.resetStats();

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', progress: { tombstoned: deleted.length } });
    expect(fake.stats().itemFetches).toBe(deleted.length);
    expect(fake.stats().maxInFlight).toBeGreaterThan(1);
    expect(fake.stats().maxInFlight).toBeLessThanOrEqual(RETRY_CONCURRENCY);
  });
});

describe('a confirmation the source refuses for good', () => {
  it('is filed as a dead letter of its entity and counted as the run’s error, never as done', async () => {
    const fake = await startFake({ entities: 30, seed: 1_902, latencyMs: 0 });
    const sourceId = 'tomb-refused';
    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 20 }));
    expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');
    const deleted = ['e-000004', 'e-000011', 'e-000020'];
    fake.control.delete(deleted);
    fake.control.setProfile({ perPathOverrides: { '/records/*': { forceStatus: 401 } } });

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', errorCount: 3 });
    expect(run.progress.tombstoned ?? 0).toBe(0);
    const open = await engine.deps.deadLetters.listAll(sourceId);
    expect(open.map((e) => [e.kind, e.ref, e.runId])).toEqual(deleted.map((id) => ['item', id, run.runId]));
    expect(open[0]?.reason).toContain('absence not confirmed');

    // Once the source answers again, retry-failed confirms each deletion and resolves its entry.
    fake.control.setProfile('none');
    expect(await runToEnd(sourceId, 'dlq_retry')).toMatchObject({ state: 'succeeded', errorCount: 0 });
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
  });
});
