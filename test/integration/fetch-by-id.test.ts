import { describe, expect, it } from 'vitest';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * What a fetch by id may conclude (retry-failed and reconciliation's absence confirmations): a dead
 * letter is resolved only by a stored item or a confirmed deletion, and an answer that is not the
 * record asked for (another id, another repository) means the entity is gone from this source.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('fetchbyid', { heartbeatIntervalMs: 500 });
let counter = 0;

async function restSource(
  entities: number,
  overrides: (url: string) => Record<string, unknown> = () => ({}),
) {
  const fake = await startFake({ entities, seed: 1_800 + counter, latencyMs: 0 });
  const sourceId = `fbi-rest-${++counter}`;
  const config = fakeRestConfig(fake.url, { pageSize: 20, ...overrides(fake.url) });
  await putSource(engine.deps, sourceId, 'rest-json', config);
  return { fake, sourceId };
}

async function githubSource(entities: number) {
  const fake = await startFake({ entities, seed: 1_800 + counter, latencyMs: 0 });
  const sourceId = `fbi-gh-${++counter}`;
  const { connector, config } = sourceOfShape(fake, 'github');
  await putSource(engine.deps, sourceId, connector, config);
  return { fake, sourceId };
}

/** What a stored item holds, for comparing before and after. */
async function stored(sourceId: string, id: string) {
  const item = await engine.deps.items.get(sourceId, id);
  return item && { version: item.version, data: item.data, tombstonedAt: item.tombstonedAt };
}

/** Every stored item but `except`, as it is now. */
async function allBut(sourceId: string, except: string) {
  const items = await engine.deps.items.listAll(sourceId);
  return items
    .filter((item) => item.entityId !== except)
    .map((item) => ({ id: item.entityId, version: item.version, data: item.data, tomb: item.tombstonedAt }));
}

// The fake's transfer trait answers a fetch of a transferred GitHub issue with a 301 to another
// repository's issue under a number this repository also uses, and a rest-json record with a 301
// to a record of another id (see tools/fake-source/traits/transfers.ts).
describe('an issue transferred to another repository (GitHub answers with a redirect to it)', () => {
  it('is tombstoned by a reconciliation, and the issue it became overwrites nothing', async () => {
    const { fake, sourceId } = await githubSource(45);
    await runToEnd(sourceId, 'full');
    fake.control.transfer([42]);
    const others = await allBut(sourceId, '42');

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', errorCount: 0, progress: { tombstoned: 1 } });
    expect((await stored(sourceId, '42'))?.tombstonedAt).toBeDefined();
    expect(await allBut(sourceId, '42')).toEqual(others);
    expect(await compareWithTruth(engine.deps, sourceId, fake, 'github')).toEqual({
      missing: [],
      stale: [],
      notTombstoned: [],
      wronglyTombstoned: [],
    });
  });

  it('has its dead letter resolved as gone by retry-failed, and nothing is stored', async () => {
    const { fake, sourceId } = await githubSource(45);
    fake.control.resize([42], 400 * 1_024);
    expect((await runToEnd(sourceId, 'full')).errorCount).toBe(1);
    fake.control.resize([42], 100);
    fake.control.transfer([42]);
    const others = await allBut(sourceId, '42');

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 0, progress: { processed: 0, gone: 1 } });
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
    expect(await stored(sourceId, '42')).toBeUndefined();
    expect(await allBut(sourceId, '42')).toEqual(others);
  });
});

describe('a rest-json record answered under another id (moved, answered by redirect)', () => {
  it('is tombstoned by a reconciliation, and the record it became is not stored', async () => {
    const { fake, sourceId } = await restSource(50);
    await runToEnd(sourceId, 'full');
    fake.control.transfer(['e-000030']);
    const others = await allBut(sourceId, 'e-000030');

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', progress: { tombstoned: 1 } });
    expect((await stored(sourceId, 'e-000030'))?.tombstonedAt).toBeDefined();
    expect(await allBut(sourceId, 'e-000030')).toEqual(others);
  });
});

describe('retry-failed of an item deleted at the source', () => {
  it('resolves its dead letter as gone: a confirmed deletion ends it', async () => {
    const { fake, sourceId } = await restSource(30);
    fake.control.resize(['e-000007'], 400 * 1_024);
    expect((await runToEnd(sourceId, 'full')).errorCount).toBe(1);
    fake.control.delete(['e-000007']);

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 0, progress: { processed: 0, gone: 1 } });
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
  });
});

describe('retry-failed of items too large to store', () => {
  it('keeps the dead letter of an item that is still too large, and resolves the one that now fits', async () => {
    const { fake, sourceId } = await restSource(40);
    fake.control.resize(['e-000007', 'e-000009'], 400 * 1_024);
    const full = await runToEnd(sourceId, 'full');
    expect(full.errorCount).toBe(2);
    const [shrunk] = fake.control.resize(['e-000009'], 100).changed;

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 1, progress: { processed: 1 } });
    const open = await engine.deps.deadLetters.listAll(sourceId);
    expect(open.map((e) => [e.ref, e.runId, e.attempts])).toEqual([['e-000007', retry.runId, 2]]);
    expect(open[0]?.reason).toContain('too large');
    expect((await engine.deps.items.get(sourceId, 'e-000009'))?.version).toBe(shrunk?.updatedAt);
    expect(await engine.deps.items.get(sourceId, 'e-000007')).toBeUndefined();
  });
});
