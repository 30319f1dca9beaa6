import { describe, expect, it } from 'vitest';
import type { LiveOptions } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * A source edited while a run reads it (issue: runs paged by position over a modification-ordered
 * listing lost entities for good). Each test races a run against the fake source's `live`
 * behaviour, then checks the store against the ground truth.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('live', { heartbeatIntervalMs: 500 });
let counter = 0;

type Shape = 'github' | 'rest-page' | 'rest-cursor';

/** A cursor the source does not promise to be a stable position: read as a listing by position. */
const POSITIONAL_CURSOR = {
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
};

async function liveSource(shape: Shape, entities: number, live: LiveOptions, pageSize = 20) {
  const fake = await startFake({ entities, seed: 900 + counter, live, latencyMs: 0 });
  const sourceId = `live-${shape}-${++counter}`;
  const { connector, config, storeShape } = sourceOfShape(fake, shape, {
    pageSize,
    ...(shape === 'rest-cursor' ? { config: POSITIONAL_CURSOR } : {}),
  });
  await putSource(engine.deps, sourceId, connector, config);
  return { fake, sourceId, storeShape };
}

describe('a source edited during a run loses nothing', () => {
  it.each<Shape>(['github', 'rest-page'])(
    '%s: an incremental run raced by edits, then one quiet incremental run, stores every live entity at its latest version',
    async (shape) => {
      // Twenty pages of 10, each raced by edits.
      const { fake, sourceId, storeShape } = await liveSource(
        shape,
        200,
        { touchesPerPage: 2, addsPerPage: 1 },
        10,
      );

      const raced = await runToEnd(sourceId, 'incremental');
      fake.control.setLive(null);
      const quiet = await runToEnd(sourceId, 'incremental');

      expect(raced.state).toBe('succeeded');
      expect(quiet.state).toBe('succeeded');
      expect(fake.control.liveHistory().touched.length).toBeGreaterThan(20);
      const comparison = await compareWithTruth(engine.deps, sourceId, fake, storeShape);
      expect(comparison.missing).toEqual([]);
      expect(comparison.stale).toEqual([]);
    },
    150_000,
  );

  it('a succeeded run’s total is what it processed, not the estimate it ran with', async () => {
    const { fake, sourceId } = await liveSource(
      'rest-cursor',
      100,
      { touchesPerPage: 0, addsPerPage: 2 },
      10,
    );
    const github = await liveSource('github', 90, { touchesPerPage: 0 });
    const withoutPulls = sourceOfShape(github.fake, 'github', { config: { includePullRequests: false } });
    await putSource(engine.deps, github.sourceId, withoutPulls.connector, withoutPulls.config);

    const growing = await runToEnd(sourceId, 'full');
    const filtered = await runToEnd(github.sourceId, 'full');

    // The listing grew while it was read: its first `total` (100) was an estimate.
    expect(growing.progress.processed).toBeGreaterThan(100);
    expect(growing.progress.total).toBe(growing.progress.processed);
    expect(fake.truth().entities.length).toBeGreaterThanOrEqual(growing.progress.processed);
    // Pull requests filtered out: no estimate while running, the exact count at the end.
    expect(filtered.progress.processed).toBe(81);
    expect(filtered.progress.total).toBe(81);
  }, 60_000);

  it.each<Shape>(['github', 'rest-page'])(
    '%s: a tie group four pages long ends, delivers each entity once, and once read whole does not hold the watermark',
    async (shape) => {
      const { fake, sourceId } = await liveSource(shape, 100, { touchesPerPage: 0 });
      // A bulk edit: 80 entities share one updatedAt; then 10 ordinary edits after it.
      const ids = fake.truth().entities.map((e) => e.id);
      const tie = fake.control.touch(ids.slice(0, 80), { tied: true }).changed[0]!.updatedAt;
      fake.control.touch(ids.slice(80, 90));

      const run = await runToEnd(sourceId, 'full');

      expect(run.state).toBe('succeeded');
      expect(run.progress.processed).toBe(100);
      const latest = fake.truth().entities.at(-1)!.updatedAt;
      expect(latest > tie).toBe(true);
      // The group was read by position, then listed again the same: the watermark moves past it.
      expect((await engine.deps.sources.require(sourceId)).watermark).toBe(latest);
    },
    60_000,
  );

  it('github: incremental runs after a tie group larger than a page read only what changed, not the group and everything after it', async () => {
    const { fake, sourceId } = await liveSource('github', 100, { touchesPerPage: 0 });
    const ids = fake.truth().entities.map((e) => e.id);
    fake.control.touch(ids.slice(0, 80), { tied: true });
    fake.control.touch(ids.slice(80, 90));
    expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');

    const processed: number[] = [];
    for (let round = 0; round < 3; round++) {
      fake.control.touch(ids.slice(90 + 2 * round, 92 + 2 * round));
      const run = await runToEnd(sourceId, 'incremental');
      expect(run.state).toBe('succeeded');
      processed.push(run.progress.processed);
    }

    // Each run reads the two edits and what the lookback re-reads, never the 80-entity group again.
    for (const count of processed) expect(count).toBeLessThan(20);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'github');
    expect(comparison.stale).toEqual([]);
    expect(comparison.missing).toEqual([]);
  }, 90_000);
});
