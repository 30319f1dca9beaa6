import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

const { engine, startFake, runToEnd } = useEngineWithFakes('pipeline', { workers: 3 });
let source: FakeSource;

beforeAll(async () => {
  source = await startFake({
    entities: 500,
    seed: 42,
    profile: { transientRate: 0.025, rate429: 0.025, retryAfterSeconds: [1, 10], invalidRecords: 10 },
  });
});

describe('a full run through the whole pipeline', () => {
  it('loads everything but the invalid records, dead-letters exactly those, and counts exactly', async () => {
    const { connector, config } = sourceOfShape(source, 'rest-cursor', { pageSize: 50 });
    await putSource(engine.deps, 'flaky', connector, config);

    const run = await runToEnd('flaky', 'full');

    const truth = source.truth();
    expect(truth.invalidIds).toHaveLength(10);
    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(490);
    expect(run.errorCount).toBe(10);
    expect(run.progress.pages).toBe(10);

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
