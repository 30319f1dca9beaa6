const { engine } = useEngineWithFakes('page-cap-windows', {
  workers: 4,
  env: { MAX_PARTITIONS_PER_RUN: '4', MIN_ENTITIES_PER_PARTITION: '50' },
});

import { afterAll, describe, expect, it } from 'vitest';
import { explainItem } from '../../lib/api/item-explain.js';
import { startRun } from '../../lib/engine/index.js';
import type { SyncRun } from '../../lib/run/model.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import {
  type FakeSource,
  fakeRestConfig,
  startFakeSource,
  type TraitOptions,
} from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

/**
 * A page cap that drops during a partitioned run of a page-numbered source that states no total:
 * GitHub caps `per_page` without saying so, search services lower their page size under load.
 * Each window meets short pages it must not read as its end: a window ends at its `until`, or at
 * an empty page, never at the first page shorter than it asked for.
 */

const fakes: FakeSource[] = [];
let counter = 0;

afterAll(async () => {
  await Promise.all(fakes.map((f) => f.stop()));
});

async function pagedSource(traits: TraitOptions) {
  const fake = await startFakeSource({ entities: 400, seed: 3_200 + counter, latencyMs: 0, traits });
  fakes.push(fake);
  const sourceId = `page-cap-${++counter}`;
  const config = fakeRestConfig(fake.url, {
    url: `${fake.url}/records-paged`,
    pageSize: 20,
    pagination: { type: 'page' },
  });
  delete config.totalPath;
  await putSource(engine.deps, sourceId, 'rest-json', config);
  return { fake, sourceId };
}

async function run(sourceId: string, mode: 'full' | 'incremental'): Promise<SyncRun> {
  const started = await startRun(engine.deps, { sourceId, mode });
  return waitForRun(engine.deps, started.runId, undefined, 120_000);
}

describe('a page cap that drops from 20 to 10 inside a partitioned run, no total', () => {
  it.each([30])(
    'loses nothing when the cap drops after %i listings',
    async (after) => {
      const { fake, sourceId } = await pagedSource({ pageCap: { first: 20, after, later: 10 } });

      const done = await run(sourceId, 'full');

      expect(done.state).toBe('succeeded');
      expect(partitionsOf(done)).toHaveLength(4);
      const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
      expect(comparison.missing).toEqual([]);
      expect(comparison.stale).toEqual([]);
      expect(done.progress.processed).toBe(400);
    },
    150_000,
  );
});

describe('an empty page inside a window of a page-numbered source that states no total', () => {
  it.each([60, 250])(
    'holds the watermark where the window stopped, says so, and the next incremental reads the rest (the page of e-%i blank once)',
    async (blank) => {
      const { fake, sourceId } = await pagedSource({ blankOnce: [blank] });

      const done = await run(sourceId, 'full');

      expect(done.state).toBe('succeeded');
      expect(partitionsOf(done)).toHaveLength(4);
      const after = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
      // The window holding the blanked page took it for its listing's end (a page-numbered listing
      // with no total cannot tell): the run says how many are missing and where it holds.
      expect(after.missing.length).toBeGreaterThan(0);
      expect(done.completeness?.verdict).toBe('short');
      expect(done.completeness?.shortBy).toBe(after.missing.length);
      expect(done.completeness?.reason).toMatch(
        /; the watermark holds at \S+, where a listing was not proved whole/,
      );
      expect(done.completeness?.heldAt).toBeTruthy();
      // Asked about a missing row, `items explain` names the short run and where it held.
      const missing = await explainItem(engine.deps, sourceId, after.missing[0]!);
      expect(missing.status).toBe('never_listed');
      expect(missing.shortRun).toMatchObject({
        runId: done.runId,
        shortBy: after.missing.length,
        heldAt: done.completeness?.heldAt,
      });
      expect(missing.summary).toContain(
        `The last checked full run ${done.runId} ended short by ${after.missing.length}`,
      );

      const next = await run(sourceId, 'incremental');

      expect(next.state).toBe('succeeded');
      const recovered = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
      expect(recovered.missing).toEqual([]);
      expect(recovered.stale).toEqual([]);
      // A later checked run that verified the source clears the hint.
      const whole = await run(sourceId, 'full');
      expect(whole.completeness?.verdict).toBe('verified');
      expect((await explainItem(engine.deps, sourceId, 'e-999999')).shortRun).toBeNull();
    },
    150_000,
  );
});
