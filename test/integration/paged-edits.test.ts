const { engine } = useEngineWithFakes('paged-edits', { workers: 2 });

/**
 * Page-number paging raced by endless edits (every listing request touches 4 rows and adds one,
 * the way a busy tracker is edited): rows edited during the run jump to the end of the
 * updatedAt-ordered listing. The run still ends — a short page at the stream's end is re-listed
 * once, not chased for as long as the source is edited — and after one quiet incremental every
 * entity is at its latest version. Without a total, the short-page rule is all that ends the
 * stream (with a total, the partitioned raced runs of partitions-connectors cover it).
 * `PAGED_EDITS_ENTITIES` (default 400) scales it (3,000 passes too, with and without a total).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import type { SyncRun } from '../../lib/run/model.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

const fakes: FakeSource[] = [];
let counter = 0;
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.stop()));
});

async function run(sourceId: string, mode: 'full' | 'incremental'): Promise<SyncRun> {
  const started = await startRun(engine.deps, { sourceId, mode });
  return waitForRun(engine.deps, started.runId, undefined, 300_000);
}

describe('page-number paging raced by edits', () => {
  it.each([false, true])(
    'holds every entity at its latest version after one quiet incremental (without a total: %s)',
    async (withoutTotal) => {
      const fake = await startFakeSource({
        entities: Number(process.env.PAGED_EDITS_ENTITIES ?? 400),
        seed: 9_400 + counter,
        latencyMs: 0,
      });
      fakes.push(fake);
      const sourceId = `paged-edits-${++counter}`;
      const config = fakeRestConfig(fake.url, {
        url: `${fake.url}/records-paged`,
        pageSize: 50,
        pagination: { type: 'page' },
      });
      if (withoutTotal) delete config.totalPath;
      await putSource(engine.deps, sourceId, 'rest-json', config);
      fake.control.setLive({ touchesPerPage: 4, addsPerPage: 1 });
      const raced = await run(sourceId, 'full');
      fake.control.setLive(null);
      expect(raced.state).toBe('succeeded');
      const quiet = await run(sourceId, 'incremental');
      expect(quiet.state).toBe('succeeded');
      const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
      expect(comparison.missing).toEqual([]);
      expect(comparison.stale).toEqual([]);
    },
    400_000,
  );
});
