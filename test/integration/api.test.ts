import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

let aws: TestAws;
let deps: ApiDeps;

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('api'));
});
afterAll(() => destroyAwsClients(aws.clients));

const call = (method: string, url: string, body?: unknown) => callApi(deps, method, url, body);

const REST_CONFIG = {
  url: 'http://127.0.0.1:9/records',
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
};

function newSourceId(): string {
  return `s-${ulid().toLowerCase()}`;
}

describe('sources', () => {
  it('PUT creates a source (201) with its config validated, hashed and its schedules named', async () => {
    const id = newSourceId();
    const res = await call('PUT', `/sources/${id}`, {
      connector: 'rest-json',
      config: REST_CONFIG,
      schedules: [{ expression: 'rate(1 hour)', mode: 'incremental' }],
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/sources/${id}`);
    expect(res.json).toMatchObject({
      sourceId: id,
      connector: 'rest-json',
      config: { ...REST_CONFIG, pageSize: 100, ordered: false },
      schedules: [{ name: `src-${id}-0`, expression: 'rate(1 hour)', mode: 'incremental' }],
      watermark: null,
      activeRunId: null,
    });
    expect(res.json.configHash).toMatch(/^[0-9a-f]{32}$/);
    expect(new Date(res.json.createdAt).toISOString()).toBe(res.json.createdAt);
  });

  it('PUT on an existing source replaces it (200), keeping createdAt and changing the hash', async () => {
    const id = newSourceId();
    const created = await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const updated = await call('PUT', `/sources/${id}`, {
      connector: 'rest-json',
      config: { ...REST_CONFIG, pageSize: 50 },
    });
    expect(updated.status).toBe(200);
    expect(updated.json.createdAt).toBe(created.json.createdAt);
    expect(updated.json.configHash).not.toBe(created.json.configHash);
    expect((await call('GET', `/sources/${id}`)).json.config.pageSize).toBe(50);
  });

  it('GET /sources pages with limit and cursor until nextCursor is null', async () => {
    for (let i = 0; i < 3; i++)
      await call('PUT', `/sources/${newSourceId()}`, { connector: 'rest-json', config: REST_CONFIG });
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call('GET', `/sources?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.json.items.length).toBeLessThanOrEqual(2);
      for (const item of res.json.items) seen.add(item.sourceId);
      cursor = res.json.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    expect(cursor).toBeNull();
    expect(seen.size).toBeGreaterThanOrEqual(3);
    expect(pages).toBeGreaterThanOrEqual(2);
  });

  it('DELETE removes the source, its schedules, runs and dead letters, then GET answers 404', async () => {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, {
      connector: 'rest-json',
      config: REST_CONFIG,
      schedules: [{ expression: 'rate(5 minutes)', mode: 'full' }],
    });
    const run = (await call('POST', `/sources/${id}/runs`, { mode: 'full' })).json;
    await deps.lifecycle.cancel(run.runId, Date.now());
    await deps.deadLetters.record({
      sourceId: id,
      kind: 'item',
      ref: 'e-1',
      errorClass: 'permanent',
      reason: 'x',
      attempts: 1,
      runId: run.runId,
      page: 1,
      now: Date.now(),
    });
    expect(await deps.schedules.names(id)).toEqual([`src-${id}-0`]);

    const deleted = await call('DELETE', `/sources/${id}`);

    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({
      sourceId: id,
      deleted: { schedules: 1, runs: 1, deadLetters: 1 },
      itemsKept: true,
    });
    expect(await deps.schedules.names(id)).toEqual([]);
    expect(await deps.deadLetters.listAll(id)).toEqual([]);
    expect(await deps.runs.get(run.runId)).toBeUndefined();
    // The id reused: no history reappears.
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    expect((await call('GET', `/sources/${id}/runs`)).json.items).toEqual([]);
    expect((await call('GET', `/sources/${id}/dead-letters`)).json.items).toEqual([]);
    await call('DELETE', `/sources/${id}`);
    const gone = await call('GET', `/sources/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({
      status: 404,
      title: 'Source not found',
      instance: `/sources/${id}`,
      sourceId: id,
    });
  });
});

describe('runs', () => {
  it('POST /runs starts a queued run (202) that GET /sources/{id}/runs/{runId} and the source listing show', async () => {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const started = await call('POST', `/sources/${id}/runs`, { mode: 'full' });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({
      sourceId: id,
      mode: 'full',
      state: 'queued',
      progress: { processed: 0, total: null, pages: 0 },
      errorCount: 0,
      summary: '0 processed, 0 in DLQ',
      checkpoint: null,
      resume: { reason: 'fresh_start', from: 'scratch' },
      failure: null,
      epoch: 1,
      restarts: 0,
    });
    expect(started.headers.location).toBe(`/sources/${id}/runs/${started.json.runId}`);
    const run = await call('GET', String(started.headers.location));
    expect(run.status).toBe(200);
    // Queued: no worker has beaten yet, so no heartbeat is shown.
    expect(run.json).toMatchObject({
      state: 'queued',
      heartbeatAgeSeconds: null,
      trigger: 'api',
      openDeadLetters: 0,
    });
    const list = await call('GET', `/sources/${id}/runs`);
    expect(list.json.items.map((r: { runId: string }) => r.runId)).toEqual([started.json.runId]);
    expect((await call('GET', `/sources/${id}`)).json.activeRunId).toBe(started.json.runId);
  });

  it('a second start answers 409 naming the active run, and creates no run', async () => {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const first = await call('POST', `/sources/${id}/runs`, { mode: 'full' });
    const second = await call('POST', `/sources/${id}/runs`, { mode: 'incremental' });
    expect(second.status).toBe(409);
    expect(second.headers['content-type']).toBe('application/problem+json');
    expect(second.json).toMatchObject({ status: 409, title: 'Source busy', activeRunId: first.json.runId });
    expect((await call('GET', `/sources/${id}/runs`)).json.items).toHaveLength(1);
  });

  it('DELETE of a busy source answers 409 with the active run and keeps the source', async () => {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const run = await call('POST', `/sources/${id}/runs`, { mode: 'full' });
    const res = await call('DELETE', `/sources/${id}`);
    expect(res.status).toBe(409);
    expect(res.json.activeRunId).toBe(run.json.runId);
    expect((await call('GET', `/sources/${id}`)).status).toBe(200);
  });

  it('cancel ends an active run (200) and releases the source; cancelling it again answers 409', async () => {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const run = await call('POST', `/sources/${id}/runs`, { mode: 'full' });
    const cancelled = await call('POST', `/sources/${id}/runs/${run.json.runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.state).toBe('cancelled');
    expect(cancelled.json.finishedAt).not.toBeNull();
    expect((await call('GET', `/sources/${id}`)).json.activeRunId).toBeNull();

    const again = await call('POST', `/sources/${id}/runs/${run.json.runId}/cancel`);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ title: 'Run already ended', status: 409 });
    expect((await call('GET', `/sources/${id}/runs/${run.json.runId}`)).json.state).toBe('cancelled');
  });

  it('answers a run under another source 404, as if it did not exist, and neither reads nor cancels it', async () => {
    const [mine, theirs] = [newSourceId(), newSourceId()];
    for (const id of [mine, theirs])
      await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const run = (await call('POST', `/sources/${theirs}/runs`, { mode: 'full' })).json;
    const missing = ulid();

    const read = await call('GET', `/sources/${mine}/runs/${run.runId}`);
    const cancel = await call('POST', `/sources/${mine}/runs/${run.runId}/cancel`);
    const unknown = await call('GET', `/sources/${mine}/runs/${missing}`);

    expect([read.status, cancel.status, unknown.status]).toEqual([404, 404, 404]);
    expect(read.json.detail).toBe(unknown.json.detail.replace(missing, run.runId));
    expect((await call('GET', `/sources/${theirs}/runs/${run.runId}`)).json.state).toBe('queued');
  });

  it('keeps the cross-source run routes for administrators', async () => {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const run = (await call('POST', `/sources/${id}/runs`, { mode: 'full' })).json;
    expect((await call('GET', `/runs/${run.runId}`)).json).toMatchObject({ runId: run.runId, sourceId: id });
    expect((await call('POST', `/runs/${run.runId}/cancel`)).json.state).toBe('cancelled');
  });

  it.each([
    ['GET', '/runs/'],
    ['GET', '/sources/'],
    ['DELETE', '/sources/{id}/'],
    ['DELETE', '/sources//{id}'],
    ['GET', '/sources/{id}//runs'],
  ])(
    'answers %s %s 404 instead of reaching the handler of the path without the extra slash',
    async (method, path) => {
      const id = newSourceId();
      await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
      const res = await call(method, path.replace('{id}', id));
      expect(res.status).toBe(404);
      expect((await call('GET', `/sources/${id}`)).status).toBe(200);
    },
  );
});

describe('dead letters', () => {
  async function seeded(): Promise<{ id: string; runA: string; runB: string }> {
    const id = newSourceId();
    await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: REST_CONFIG });
    const [runA, runB] = [ulid(), ulid()];
    const base = { sourceId: id, attempts: 1, page: 1, now: Date.now() };
    await deps.deadLetters.record({
      ...base,
      kind: 'item',
      ref: 'e-1',
      errorClass: 'permanent',
      reason: 'bad',
      runId: runA,
    });
    await deps.deadLetters.record({
      ...base,
      kind: 'item',
      ref: 'e-2',
      errorClass: 'transient',
      reason: '503',
      runId: runA,
    });
    await deps.deadLetters.record({
      ...base,
      kind: 'page',
      ref: 'c-9',
      errorClass: 'transient',
      reason: '503',
      runId: runB,
    });
    return { id, runA, runB };
  }

  it('lists open entries with ISO times, filtered by error class and by run', async () => {
    const { id, runA, runB } = await seeded();
    const all = await call('GET', `/sources/${id}/dead-letters`);
    expect(all.status).toBe(200);
    expect(all.json.items).toHaveLength(3);
    expect(all.json.items[0]).toMatchObject({
      sourceId: id,
      kind: 'item',
      ref: 'e-1',
      errorClass: 'permanent',
    });
    expect(all.json.items[0].firstFailedAt).toMatch(/Z$/);
    const transient = await call('GET', `/sources/${id}/dead-letters?errorClass=transient`);
    expect(transient.json.items.map((e: { ref: string }) => e.ref).sort()).toEqual(['c-9', 'e-2']);
    const ofRunB = await call('GET', `/sources/${id}/dead-letters?runId=${runB}`);
    expect(ofRunB.json.items.map((e: { ref: string }) => e.ref)).toEqual(['c-9']);
    expect(runA).not.toBe(runB);
  });

  it('pages dead letters with limit and cursor', async () => {
    const { id } = await seeded();
    const first = await call('GET', `/sources/${id}/dead-letters?limit=2`);
    expect(first.json.items).toHaveLength(2);
    expect(first.json.nextCursor).toEqual(expect.any(String));
    const second = await call('GET', `/sources/${id}/dead-letters?limit=2&cursor=${first.json.nextCursor}`);
    expect(second.json.items).toHaveLength(1);
  });

  it('retry starts a dlq_retry run (202); a retry while it is active answers 409', async () => {
    const { id } = await seeded();
    const retry = await call('POST', `/sources/${id}/dead-letters/retry`);
    expect(retry.status).toBe(202);
    expect(retry.json).toMatchObject({ mode: 'dlq_retry', state: 'queued', sourceId: id });
    const busy = await call('POST', `/sources/${id}/dead-letters/retry`, {});
    expect(busy.status).toBe(409);
    expect(busy.json.activeRunId).toBe(retry.json.runId);
  });
});

describe('openapi.json', () => {
  it('is served as an OpenAPI 3.1 document', async () => {
    const res = await call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.json.openapi).toBe('3.1.0');
    expect(Object.keys(res.json.paths)).toContain('/sources/{sourceId}/dead-letters/retry');
  });
});
