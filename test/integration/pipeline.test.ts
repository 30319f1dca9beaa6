import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { type FakeSource, startFakeSource } from '../../tools/fake-source/index.js';
import {
  fakeRestConfig,
  putSource,
  setUpTestEngine,
  type TestEngine,
  waitForRun,
} from '../support/harness.js';

let engine: TestEngine;
let source: FakeSource;

beforeAll(async () => {
  engine = await setUpTestEngine('pipeline');
  source = await startFakeSource({
    entities: 2_000,
    seed: 42,
    profile: { transientRate: 0.025, rate429: 0.025, retryAfterSeconds: [1, 10], invalidRecords: 10 },
  });
  engine.runtime({ workers: 3 }).start();
});
afterAll(async () => {
  await engine.stop();
  await source.stop();
});

describe('a full run through the whole pipeline', () => {
  it('loads everything but the invalid records, dead-letters exactly those, and counts exactly', async () => {
    await putSource(engine.deps, 'flaky', 'rest-json', fakeRestConfig(source.url));

    const started = await startRun(engine.deps, { sourceId: 'flaky', mode: 'full' });
    const run = await waitForRun(engine.deps, started.runId);

    const truth = source.truth();
    expect(truth.invalidIds).toHaveLength(10);
    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(1_990);
    expect(run.errorCount).toBe(10);
    expect(run.progress.pages).toBe(20);

    const deadLetters = await engine.deps.deadLetters.listAll('flaky');
    expect(deadLetters.map((d) => d.ref).sort()).toEqual([...truth.invalidIds].sort());
    for (const entry of deadLetters) {
      expect(entry.kind).toBe('item');
      expect(entry.reason).toMatch(/invalid record/);
    }

    const items = await engine.deps.items.listAll('flaky');
    const invalid = new Set(truth.invalidIds);
    const expected = truth.entities.filter((e) => !invalid.has(e.id));
    expect(items).toHaveLength(expected.length);
    const stored = new Map(items.map((item) => [item.entityId, item.version]));
    for (const entity of expected) expect(stored.get(entity.id)).toBe(entity.updatedAt);

    const sourceRow = await engine.deps.sources.require('flaky');
    expect(sourceRow.activeRunId).toBeNull();
    expect(source.stats().faultsInjected).toBeGreaterThan(0);
  });
});
