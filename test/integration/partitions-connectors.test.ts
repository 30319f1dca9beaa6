// Small sources in pages of 10: four windows of ~30 entities prove the split as well as 400 in
// pages of 20 did, at a quarter of the writes (each one a request to the emulator).
const ENTITIES = 120;
const PAGE = 10;
const MIN_PER_PARTITION = 20;

const { engine } = useEngineWithFakes('partitions-connectors', {
  workers: 4,
  env: { MAX_PARTITIONS_PER_RUN: '4', MIN_ENTITIES_PER_PARTITION: String(MIN_PER_PARTITION) },
});

import { afterAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import type { SyncRun } from '../../lib/run/model.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

/**
 * Partitioned runs through the engine for every connector shape that plans windows, against the
 * live fake source: gitlab-issues (X-Total and positional reads), rest-json keyed over page
 * numbers (positional reads), keyed over a plain cursor and over the fake's stable cursor (count
 * bisection; the stable cursor's windows follow the source's own tokens). github-issues is covered
 * in `partitions.test.ts`.
 */

let counter = 0;
const fakes: FakeSource[] = [];

afterAll(async () => {
  await Promise.all(fakes.map((f) => f.stop()));
});

const SHAPES = {
  'gitlab-issues': (url: string) => ({
    connector: 'gitlab-issues',
    config: { project: 'acme/parts', baseUrl: `${url}/api/v4`, perPage: PAGE },
    ids: 'github' as const,
  }),
  'rest-json (keyed, page)': (url: string) => ({
    connector: 'rest-json',
    config: fakeRestConfig(url, {
      url: `${url}/records-paged`,
      pageSize: PAGE,
      pagination: { type: 'page' },
    }),
    ids: 'rest' as const,
  }),
  'rest-json (keyed, cursor)': (url: string) => ({
    connector: 'rest-json',
    config: fakeRestConfig(url, {
      pageSize: PAGE,
      pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor', stable: false },
    }),
    ids: 'rest' as const,
  }),
  'rest-json (stable cursor)': (url: string) => ({
    connector: 'rest-json',
    config: fakeRestConfig(url, { pageSize: PAGE }),
    ids: 'rest' as const,
  }),
};

async function source(shape: keyof typeof SHAPES, entities: number, invalidRecords = 0) {
  const fake = await startFakeSource({
    entities,
    seed: 5_200 + counter,
    latencyMs: 0,
    profile: { invalidRecords },
  });
  fakes.push(fake);
  const sourceId = `part-conn-${++counter}`;
  const { connector, config, ids } = SHAPES[shape](fake.url);
  await putSource(engine.deps, sourceId, connector, config);
  return { fake, sourceId, ids };
}

async function fullRun(sourceId: string): Promise<SyncRun> {
  const started = await startRun(engine.deps, { sourceId, mode: 'full' });
  return waitForRun(engine.deps, started.runId, undefined, 90_000);
}

describe.each(Object.keys(SHAPES) as (keyof typeof SHAPES)[])('a partitioned full run of %s', (shape) => {
  it('is split by the data and stores every entity once, invalid records dead-lettered once each', async () => {
    const { fake, sourceId, ids } = await source(shape, ENTITIES, 5);

    const done = await fullRun(sourceId);

    expect(done.state).toBe('succeeded');
    const partitions = partitionsOf(done);
    expect(partitions).toHaveLength(4);
    // Windows are only roughly even (quantile positions shift with the fake's clock-based versions),
    // and the 5 invalid records may fall in one window: each still reads a real share of the stream.
    for (const p of partitions) expect(p.processed).toBeGreaterThanOrEqual(ENTITIES / partitions.length / 2);
    const truth = fake.truth();
    expect(done.progress.processed).toBe(truth.entities.length - truth.invalidIds.length);
    expect(done.errorCount).toBe(truth.invalidIds.length);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, ids);
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);
  }, 120_000);

  it('raced by edits, stores every live entity at its latest version without another run', async () => {
    const { fake, sourceId, ids } = await source(shape, ENTITIES);
    fake.control.setLive({ touchesPerPage: 2, addsPerPage: 1, maxChanges: 30 });

    const raced = await fullRun(sourceId);
    fake.control.setLive(null);

    expect(raced.state).toBe('succeeded');
    expect(partitionsOf(raced).length).toBeGreaterThan(1);
    expect(fake.control.liveHistory().touched.length).toBeGreaterThan(10);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, ids);
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);
  }, 120_000);
});

describe('a partitioned run over ids DynamoDB cannot hold', () => {
  it('ends: a window whose newest record has a lone surrogate in its id keeps it among the ids it read as a digest', async () => {
    const fake = await startFakeSource({
      entities: 60,
      seed: 21,
      latencyMs: 0,
      profile: { invalidRecords: 0 },
      traits: { hostileKeys: 3 },
    });
    fakes.push(fake);
    // Pages of one: each page's record is the newest its window has read, the bad id's too.
    await putSource(engine.deps, 'hostile-windows', 'rest-json', fakeRestConfig(fake.url, { pageSize: 1 }));

    const done = await fullRun('hostile-windows');

    expect(done.state).toBe('succeeded');
    expect(partitionsOf(done).length).toBeGreaterThan(1);
    const { hostile } = fake.truth();
    const badIds = Object.keys(hostile).filter((id) => hostile[id] === 'surrogate-id');
    expect(badIds.length).toBeGreaterThan(0);
    const letters = await engine.deps.deadLetters.listAll('hostile-windows');
    for (const id of badIds) expect(letters.map((entry) => entry.ref)).toContain(`${id}\ufffd`);
    const stored = await engine.deps.items.listAll('hostile-windows');
    expect(stored.length + letters.length).toBe(60);
  }, 120_000);
});
