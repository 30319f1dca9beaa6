import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { startRun } from '../../lib/engine/index.js';
import { apiOver, callApi } from '../support/api.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * The items API on the emulator: listing while a run writes, the change feed after an incremental
 * run and a reconciliation, provenance with the source request redacted, and explain.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('items-api');
let api: ApiDeps | undefined;
let counter = 0;

function call(url: string) {
  api ??= apiOver(engine);
  return callApi(api, 'GET', url);
}

async function newSource(entities: number, pageSize = 20) {
  const fake = await startFake({ entities, seed: 2100 + counter, latencyMs: 0 });
  const sourceId = `items-${++counter}`;
  // A credential in the URL's fixed parameters: provenance must never store it.
  const config = fakeRestConfig(fake.url, { pageSize, extraQuery: { api_key: 'sk-live-0123456789' } });
  await putSource(engine.deps, sourceId, 'rest-json', config);
  return { fake, sourceId };
}

/** Every page of a listing, following `nextCursor`. */
async function listAll(base: string, onPage?: () => Promise<void>) {
  // biome-ignore lint/suspicious/noExplicitAny: item views
  const items: any[] = [];
  let cursor: string | null = null;
  let last: { nextChangedSince?: string } = {};
  do {
    const sep = base.includes('?') ? '&' : '?';
    const res = await call(cursor ? `${base}${sep}cursor=${encodeURIComponent(cursor)}` : base);
    expect(res.status).toBe(200);
    items.push(...res.json.items);
    cursor = res.json.nextCursor;
    last = res.json;
    await onPage?.();
  } while (cursor);
  return { items, nextChangedSince: last.nextChangedSince };
}

describe('GET /sources/{id}/items', () => {
  it('pages through every entity exactly once while a run writes', async () => {
    const { fake, sourceId } = await newSource(60, 10);
    await runToEnd(sourceId, 'full');
    const before = new Set(fake.truth().entities.map((e) => e.id));
    // Every entity edited, so the run writes on every page (an unchanged one is left unwritten).
    fake.control.touch([...before]);
    fake.control.setLive({ touchesPerPage: 3, addsPerPage: 2 });

    const started = await startRun(engine.deps, { sourceId, mode: 'full' });
    const listedFrom = Date.now();
    const { items } = await listAll(
      `/sources/${sourceId}/items?limit=7`,
      () => new Promise((r) => setTimeout(r, 40)),
    );
    const listedUntil = Date.now();
    await waitForRun(engine.deps, started.runId);
    fake.control.setLive(null);

    const ids = items.map((item) => item.entityId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of before) expect(ids.filter((x) => x === id)).toHaveLength(1);
    // Two-sided: the run did write while the listing was being read.
    const stored = await engine.deps.items.listAll(sourceId);
    expect(stored.some((item) => item.syncedAt >= listedFrom && item.syncedAt <= listedUntil)).toBe(true);
  });

  it('changedSince after an incremental run returns exactly the entities it changed, then those a reconciliation tombstoned', async () => {
    const { fake, sourceId } = await newSource(80);
    await runToEnd(sourceId, 'full');
    const touched = fake.control.touch(['e-000005', 'e-000020', 'e-000041', 'e-000060', 'e-000079']).changed;
    const since = new Date().toISOString();

    const incremental = await runToEnd(sourceId, 'incremental');
    const changes = await listAll(`/sources/${sourceId}/items?changedSince=${since}&limit=3`);

    expect(incremental.state).toBe('succeeded');
    // The run re-read entities around its watermark unchanged: they are not changes.
    expect(incremental.progress.processed).toBeGreaterThan(touched.length);
    expect(changes.items.map((item) => item.entityId).sort()).toEqual(touched.map((e) => e.id).sort());
    expect(changes.nextChangedSince).toBeDefined();

    fake.control.delete(['e-000010', 'e-000011']);
    const beforeReconcile = new Date().toISOString();
    await runToEnd(sourceId, 'reconciliation');
    const tombstones = await listAll(`/sources/${sourceId}/items?changedSince=${beforeReconcile}`);
    const live = await listAll(
      `/sources/${sourceId}/items?changedSince=${beforeReconcile}&includeTombstoned=false`,
    );

    // In change order: the two absences are confirmed side by side, so either may come first.
    const byId = [...tombstones.items].sort((a, b) => a.entityId.localeCompare(b.entityId));
    expect(byId.map((item) => [item.entityId, item.tombstonedAt !== null])).toEqual([
      ['e-000010', true],
      ['e-000011', true],
    ]);
    expect(live.items).toEqual([]);
  });

  it('refuses a cursor that was altered (400), and a source that does not exist (404)', async () => {
    const { sourceId } = await newSource(30, 10);
    await runToEnd(sourceId, 'full');
    const first = await call(`/sources/${sourceId}/items?limit=5`);
    const tampered = `${first.json.nextCursor.slice(0, -2)}xx`;

    expect((await call(`/sources/${sourceId}/items?cursor=${tampered}`)).status).toBe(400);
    expect((await call('/sources/no-such-source/items')).status).toBe(404);
  });
});

describe('GET /sources/{id}/items/{entityId} and explain', () => {
  it('returns an entity with its provenance, the source request redacted; 404 problem for an unknown one', async () => {
    const { fake, sourceId } = await newSource(30, 10);
    const run = await runToEnd(sourceId, 'full');

    const found = await call(`/sources/${sourceId}/items/e-000015`);
    const missing = await call(`/sources/${sourceId}/items/e-999999`);

    expect(found.status).toBe(200);
    expect(found.json).toMatchObject({
      entityId: 'e-000015',
      version: fake.truth().entities.find((e) => e.id === 'e-000015')!.updatedAt,
      tombstonedAt: null,
      provenance: { runId: run.runId, mode: 'full', page: 2, window: null, firstRunId: run.runId },
    });
    expect(found.json.provenance.request).toContain(`${fake.url}/records?`);
    expect(found.json.provenance.request).toContain('api_key=<redacted>');
    expect(JSON.stringify(found.json)).not.toContain('sk-live-0123456789');
    expect(Date.parse(found.json.provenance.fetchedAt)).toBeLessThanOrEqual(
      Date.parse(found.json.provenance.storedAt),
    );
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
  });

  it('explains a dead-lettered entity, a tombstoned one and one never listed, each by its reason', async () => {
    const { fake, sourceId } = await newSource(40, 10);
    fake.control.resize(['e-000007'], 400 * 1_024);
    const full = await runToEnd(sourceId, 'full');
    fake.control.delete(['e-000030']);
    const reconciliation = await runToEnd(sourceId, 'reconciliation');

    const deadLettered = (await call(`/sources/${sourceId}/items/e-000007/explain`)).json;
    const tombstoned = (await call(`/sources/${sourceId}/items/e-000030/explain`)).json;
    const neverListed = (await call(`/sources/${sourceId}/items/e-404404/explain`)).json;
    const stored = (await call(`/sources/${sourceId}/items/e-000001/explain`)).json;

    expect(deadLettered.status).toBe('dead_lettered');
    expect(deadLettered.discard).toBeNull();
    expect(deadLettered.summary).toMatch(/item too large/);
    // The way out, as a command to paste.
    expect(deadLettered.summary).toContain(`(harvester dlq retry ${sourceId})`);
    expect(deadLettered.deadLetters[0]).toMatchObject({ ref: 'e-000007' });
    expect(deadLettered.item).toBeNull();
    expect(tombstoned.status).toBe('tombstoned');
    expect(tombstoned.tombstone.runId).toBe(reconciliation.runId);
    expect(tombstoned.summary).toContain(reconciliation.runId);
    expect(neverListed.status).toBe('never_listed');
    expect(neverListed.summary).toMatch(/^Never listed/);
    expect(stored.status).toBe('stored');
    // The reconciliation listed it unchanged and left the row alone (it records what it listed per
    // page, not on the row): the row is the full run's write.
    expect(stored.item.provenance.runId).toBe(full.runId);
    expect(stored.lastListed).toMatchObject({ runId: full.runId, mode: 'full' });
    expect(stored.item.provenance.firstRunId).toBe(full.runId);
  });

  it('explains a discarded entity as discarded, with who gave up on it, when and why', async () => {
    const { fake, sourceId } = await newSource(10, 10);
    fake.control.resize(['e-000004'], 400 * 1_024);
    const run = await runToEnd(sourceId, 'full');
    const at = Date.parse('2026-03-01T10:00:00Z');
    await engine.deps.deadLetters.discard(sourceId, 'item#e-000004', {
      at,
      by: 'arn:aws:iam::123456789012:user/ops',
      reason: 'oversized upstream, accepted',
    });

    const story = (await call(`/sources/${sourceId}/items/e-000004/explain`)).json;

    expect(story.status).toBe('discarded');
    expect(story.discard).toEqual({
      at: '2026-03-01T10:00:00.000Z',
      by: 'arn:aws:iam::123456789012:user/ops',
      reason: 'oversized upstream, accepted',
    });
    expect(story.summary).toMatch(/^Not stored, given up: dead-lettered with reason "item too large/);
    expect(story.summary).toContain(`in run ${run.runId}`);
    expect(story.summary).toContain(
      'discarded by arn:aws:iam::123456789012:user/ops at 2026-03-01T10:00:00.000Z: "oversized upstream, accepted"',
    );
    expect(story.deadLetters[0]).toMatchObject({ ref: 'e-000004' });
  });
});
