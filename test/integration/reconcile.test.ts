import { describe, expect, it } from 'vitest';
import { CONFIRMATIONS_PER_SLICE } from '../../lib/engine/work/tombstone-pass.js';
import type { LiveOptions } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * Reconciliation never tombstones a live entity: a stable, complete listing; everything it served
 * counts as seen; each absence confirmed by fetching the item; the pass in bounded slices.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('reconcile', { heartbeatIntervalMs: 500 });
let counter = 0;

async function source(shape: 'github' | 'rest-page' | 'rest-cursor', entities: number, live?: LiveOptions) {
  const fake = await startFake({
    entities,
    seed: 700 + counter,
    latencyMs: 0,
    ...(live ? { live } : {}),
  });
  const sourceId = `rec-${shape}-${++counter}`;
  const { connector, config, storeShape } = sourceOfShape(fake, shape, {
    pageSize: shape === 'rest-cursor' ? 50 : 10,
  });
  await putSource(engine.deps, sourceId, connector, config);
  return { fake, sourceId, storeShape };
}

describe('a reconciliation raced by edits', () => {
  it.each(['github', 'rest-page'] as const)(
    '%s: tombstones no live entity, every entity deleted before it, and after a quiet one exactly the deleted',
    async (shape) => {
      const { fake, sourceId, storeShape } = await source(shape, 60);
      await runToEnd(sourceId, 'full');
      const deletedBefore = fake.control.delete(['e-000010', 'e-000030', 'e-000055']).changed;
      fake.control.setLive({ touchesPerPage: 2, deletesPerPage: 1, addsPerPage: 1 });

      const raced = await runToEnd(sourceId, 'reconciliation');
      fake.control.setLive(null);
      const afterRace = await compareWithTruth(engine.deps, sourceId, fake, storeShape);
      await runToEnd(sourceId, 'incremental');
      const quiet = await runToEnd(sourceId, 'reconciliation');

      expect(raced.state).toBe('succeeded');
      expect(quiet.state).toBe('succeeded');
      expect(afterRace.wronglyTombstoned).toEqual([]);
      const tombstoned = (await engine.deps.items.listAll(sourceId))
        .filter((item) => item.tombstonedAt !== undefined)
        .map((item) => item.entityId);
      const idOf = (id: string) => (storeShape === 'github' ? String(Number(id.slice(2))) : id);
      for (const entity of deletedBefore) expect(tombstoned).toContain(idOf(entity.id));
      const final = await compareWithTruth(engine.deps, sourceId, fake, storeShape);
      expect(final.wronglyTombstoned).toEqual([]);
      expect(final.notTombstoned).toEqual([]);
      expect(raced.progress.tombstoned).toBeGreaterThanOrEqual(deletedBefore.length);
    },
    150_000,
  );
});

describe('reconciliation', () => {
  it.each(['github', 'rest-cursor'] as const)(
    '%s: an entity tombstoned, then served again at the same version, is listed and live after one run',
    async (shape) => {
      const { fake, sourceId } = await source(shape, 30);
      await runToEnd(sourceId, 'full');
      const [trashed] = fake.control.delete(['e-000020']).changed;
      await runToEnd(sourceId, 'reconciliation');
      const id = shape === 'github' ? '20' : 'e-000020';
      expect((await engine.deps.items.get(sourceId, id))?.tombstonedAt).toBeDefined();

      expect(fake.control.restore(['e-000020']).changed).toEqual([trashed]);
      const run = await runToEnd(sourceId, 'full');

      expect(run.state).toBe('succeeded');
      const item = await engine.deps.items.get(sourceId, id);
      expect(item?.tombstonedAt).toBeUndefined();
      expect(item?.tombstonedBy).toBeUndefined();
      expect(item?.version).toBe(trashed?.updatedAt);
    },
  );

  it('never tombstones an entity that grew too large to store: it is alive', async () => {
    const { fake, sourceId } = await source('rest-cursor', 60);
    await runToEnd(sourceId, 'full');
    fake.control.resize(['e-000007'], 400 * 1_024);
    fake.control.delete(['e-000050']);

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run.state).toBe('succeeded');
    expect(run.errorCount).toBe(1);
    expect((await engine.deps.items.get(sourceId, 'e-000007'))?.tombstonedAt).toBeUndefined();
    expect((await engine.deps.items.get(sourceId, 'e-000050'))?.tombstonedAt).toBeDefined();
    expect(run.progress.tombstoned).toBe(1);
  });

  it('confirms each absence with the source: an item only missing from the listing is kept', async () => {
    const { fake, sourceId } = await source('rest-cursor', 40);
    await runToEnd(sourceId, 'full');
    // e-000020 is left out of the listing (a lagging index), yet fetching it by id finds it.
    fake.control.hide(['e-000020']);
    fake.control.delete(['e-000030']);

    const run = await runToEnd(sourceId, 'reconciliation');

    expect((await engine.deps.items.get(sourceId, 'e-000020'))?.tombstonedAt).toBeUndefined();
    expect((await engine.deps.items.get(sourceId, 'e-000030'))?.tombstonedAt).toBeDefined();
    expect(run.progress.tombstoned).toBe(1);
  });

  it('tombstones in bounded slices across page messages, every confirmed absence once', async () => {
    // Enough deletions for three slices, and a listing of more than one page besides.
    const ENTITIES = CONFIRMATIONS_PER_SLICE * 2 + 20 + 60;
    const { fake, sourceId } = await source('rest-cursor', ENTITIES);
    await runToEnd(sourceId, 'full');
    const doomed = fake
      .truth()
      .entities.slice(0, CONFIRMATIONS_PER_SLICE * 2 + 20)
      .map((e) => e.id);
    fake.control.delete(doomed);

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run.state).toBe('succeeded');
    expect(run.progress.tombstoned).toBe(doomed.length);
    const listingPages = Math.ceil((ENTITIES - doomed.length) / 50);
    // At most CONFIRMATIONS_PER_SLICE confirmations a page: three slices at least.
    expect(run.progress.pages).toBeGreaterThanOrEqual(listingPages + 3);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
    expect(comparison.notTombstoned).toEqual([]);
    expect(comparison.wronglyTombstoned).toEqual([]);
  });
});
