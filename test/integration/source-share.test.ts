import { describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { memorySource, withMemoryKeyed } from '../support/memory-keyed.js';

/**
 * One source's share of the page workers (`MAX_WORKERS_PER_SOURCE`): a run is split into at most
 * that many partitions — page chains, each with at most one page in a worker at a time — however
 * many its start asks for, so one source's run cannot take every worker slot.
 */

const { engine } = useEngineWithFakes('share', {
  workers: 3,
  connectors: withMemoryKeyed,
  env: { MAX_PARTITIONS_PER_RUN: '8', MIN_ENTITIES_PER_PARTITION: '20', MAX_WORKERS_PER_SOURCE: '2' },
});
describe("a source's share of the workers", () => {
  it('caps the partitions of a run that asks for more, and the run still reads everything', async () => {
    memorySource('share-1', 200);
    await putSource(engine.deps, 'share-1', 'memory-keyed', { key: 'share-1', pageSize: 20 });

    const started = await startRun(engine.deps, { sourceId: 'share-1', mode: 'full', partitions: 8 });
    const done = await waitForRun(engine.deps, started.runId, undefined, 60_000);

    expect(done.state).toBe('succeeded');
    expect(partitionsOf(done)).toHaveLength(2);
    expect(done.progress).toMatchObject({ processed: 200, total: 200 });
  }, 60_000);
});
