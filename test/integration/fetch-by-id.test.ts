import { describe, expect, it } from 'vitest';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

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
  await putSource(engine.deps, sourceId, 'github-issues', {
    owner: 'octo',
    repo: 'fbi',
    baseUrl: fake.url,
    perPage: 20,
  });
  return { fake, sourceId };
}

/** What a stored item holds, for comparing before and after. */
async function stored(sourceId: string, id: string) {
  const item = await engine.deps.items.get(sourceId, id);
  return item && { version: item.version, data: item.data, tombstonedAt: item.tombstonedAt };
}

describe('an issue transferred to another repository (GitHub answers with a redirect to it)', () => {
  it('is tombstoned by a reconciliation, and the issue it became overwrites nothing', async () => {
    const { fake, sourceId } = await githubSource(45);
    await runToEnd(sourceId, 'full');
    const first = await stored(sourceId, '1');
    const [moved] = fake.control.transfer([42]).moved;
    // It became issue #1 of another repository: the number of an issue of this one.
    expect(moved?.to).toMatchObject({ repository: 'elsewhere/moved', number: 1 });

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', errorCount: 0, progress: { tombstoned: 1 } });
    expect((await stored(sourceId, '42'))?.tombstonedAt).toBeDefined();
    expect(await stored(sourceId, '1')).toEqual(first);
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
    const first = await stored(sourceId, '1');
    fake.control.resize([42], 100);
    fake.control.transfer([42]);

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 0, progress: { processed: 0 } });
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
    expect(await stored(sourceId, '42')).toBeUndefined();
    expect(await stored(sourceId, '1')).toEqual(first);
  });
});

describe('an answer for another id', () => {
  it('confirms the absence of the id asked for: a reconciliation tombstones it and leaves the other as it was', async () => {
    // Every fetch by id is answered with e-000001, whatever was asked (a misrouted item endpoint).
    const { fake, sourceId } = await restSource(50, (url) => ({
      itemUrl: `${url}/records/e-000001?asked={id}`,
    }));
    await runToEnd(sourceId, 'full');
    const first = await stored(sourceId, 'e-000001');
    fake.control.delete(['e-000030']);

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', progress: { tombstoned: 1 } });
    expect((await stored(sourceId, 'e-000030'))?.tombstonedAt).toBeDefined();
    expect(await stored(sourceId, 'e-000001')).toEqual(first);
  });
});

describe('retry-failed of an item deleted at the source', () => {
  it('resolves its dead letter as gone: a confirmed deletion ends it', async () => {
    const { fake, sourceId } = await restSource(30);
    fake.control.resize(['e-000007'], 400 * 1_024);
    expect((await runToEnd(sourceId, 'full')).errorCount).toBe(1);
    fake.control.delete(['e-000007']);

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 0, progress: { processed: 0 } });
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
