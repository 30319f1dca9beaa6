import { describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import type { RunMode, SyncRun } from '../../lib/run/model.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import { fakeRestConfig } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

/**
 * DynamoDB answers a write with HTTP 500 `InternalServerError` after which "the request may or may
 * not have succeeded" (its developer guide, "Error handling with DynamoDB"), and a connection can
 * drop once a request has arrived. The SDK sends the write again; a conditional write that was
 * applied then meets its own condition. The engine's stores here go through the fault layer with
 * a share of single-item writes applied and answered that way, and the file's runtime has no
 * reaper: a run must end on its own, every entity stored once, its counts exact.
 */

const ENTITIES = 60;

const { engine, startFake } = useEngineWithFakes('lost-answers', {
  workers: 2,
  env: { MAX_PARTITIONS_PER_RUN: '3', MIN_ENTITIES_PER_PARTITION: '10' },
  dynamoFaults: { seed: 11, lostAnswer: 0.2 },
});

async function run(sourceId: string, mode: RunMode, partitions: number): Promise<SyncRun> {
  const started = await startRun(engine.deps, { sourceId, mode, partitions });
  return waitForRun(engine.deps, started.runId, undefined, 60_000);
}

describe.each([
  ['one stream', 1],
  ['three partitions', 3],
])('runs whose writes lose their answers (%s)', (_label, partitions) => {
  it('end succeeded on their own, every entity stored once and counted once', async () => {
    const fake = await startFake({ entities: ENTITIES, seed: 40 + partitions, latencyMs: 0 });
    const sourceId = `lost-${partitions}`;
    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 5 }));
    const before = engine.faults!.counts.lostAnswers;

    const full = await run(sourceId, 'full', partitions);

    expect(full.state).toBe('succeeded');
    if (partitions > 1) expect(partitionsOf(full).length).toBeGreaterThan(1);
    expect(full.progress.processed).toBe(ENTITIES);
    expect(full.errorCount).toBe(0);
    expect(engine.faults!.counts.lostAnswers).toBeGreaterThan(before + 5);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);

    fake.control.touch(
      fake
        .truth()
        .entities.slice(0, 7)
        .map((e) => e.id),
    );
    const incremental = await run(sourceId, 'incremental', 1);

    expect(incremental.state).toBe('succeeded');
    const after = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
    expect(after.stale).toEqual([]);
  }, 150_000);
});
