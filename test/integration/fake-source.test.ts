import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeSource,
  type FakeSourceOptions,
  type GroundTruth,
  startFakeSource,
} from '../../tools/fake-source/index.js';

const started: FakeSource[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((source) => source.stop()));
});

async function start(options: Partial<FakeSourceOptions> = {}): Promise<FakeSource> {
  const source = await startFakeSource({ entities: 250, seed: 7, ...options });
  started.push(source);
  return source;
}

async function getJson<T = unknown>(url: string): Promise<{ status: number; headers: Headers; body: T }> {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, body: (await response.json()) as T };
}

async function control(source: FakeSource, command: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${source.url}/_control`, { method: 'POST', body: JSON.stringify(command) });
  return { status: response.status, body: await response.json() };
}

interface RecordsPage {
  data: { id: string; updatedAt: string; version: number }[];
  next_cursor: string | null;
  total: number;
}

/** Lists /records to the end, calling `between` after each page (to change the source mid-run). */
async function listAll(source: FakeSource, query: string, between?: (page: number) => void) {
  const seen: RecordsPage['data'] = [];
  let cursor: string | null = null;
  let page = 0;
  do {
    const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const { body } = await getJson<RecordsPage>(`${source.url}/records?${query}${suffix}`);
    seen.push(...body.data);
    cursor = body.next_cursor;
    between?.(++page);
  } while (cursor);
  return seen;
}

describe('rest-json cursor listing', () => {
  it('returns every entity exactly once, in updatedAt order, matching the ground truth', async () => {
    const source = await start();

    const seen = await listAll(source, 'limit=40');

    const truth = await getJson<GroundTruth>(`${source.url}/_truth`);
    expect(seen.map(({ id, updatedAt, version }) => ({ id, updatedAt, version }))).toEqual(
      truth.body.entities.map(({ id, updatedAt, version }) => ({ id, updatedAt, version })),
    );
    expect(new Set(seen.map((r) => r.id)).size).toBe(250);
    expect(seen.map((r) => r.updatedAt)).toEqual(seen.map((r) => r.updatedAt).sort());
    expect(seen[0]).toMatchObject({ id: 'e-000001', updatedAt: '2024-01-01T00:00:00.000Z', version: 1 });
  });

  it('filters by since (inclusive) and counts only the matching entities in total', async () => {
    const source = await start();

    const { body } = await getJson<RecordsPage>(
      `${source.url}/records?limit=10&since=2024-01-01T00:01:40.000Z`,
    );
    const all = await listAll(source, 'limit=100&since=2024-01-01T00:01:40.000Z');

    expect(body.total).toBe(150);
    expect(body.data[0]?.id).toBe('e-000101');
    expect(all).toHaveLength(150);
  });

  it('keeps listing without skips when entities are touched mid-run: touched ones come again at the end', async () => {
    const source = await start();

    const seen = await listAll(source, 'limit=25', (page) => {
      if (page === 2) source.control.touch(['e-000005', 'e-000120']);
    });

    const ids = seen.map((r) => r.id);
    expect(new Set(ids).size).toBe(250);
    expect(ids.filter((id) => id === 'e-000005')).toHaveLength(2);
    expect(ids.filter((id) => id === 'e-000120')).toHaveLength(1);
    expect(seen.slice(-2).map((r) => [r.id, r.version])).toEqual([
      ['e-000005', 2],
      ['e-000120', 2],
    ]);
  });

  it('answers 400 to a cursor it did not issue', async () => {
    const source = await start();

    const { status } = await getJson(`${source.url}/records?cursor=not-a-cursor`);

    expect(status).toBe(400);
  });
});

describe('rest-json page-number listing and item fetch', () => {
  it('serves numbered pages until one comes back empty', async () => {
    const source = await start({ entities: 45 });

    const pages = await Promise.all(
      [1, 2, 3, 4].map((p) =>
        getJson<{ data: unknown[]; page: number; total: number }>(
          `${source.url}/records-paged?page=${p}&limit=20`,
        ),
      ),
    );

    expect(pages.map((p) => p.body.data.length)).toEqual([20, 20, 5, 0]);
    expect(pages.map((p) => [p.body.page, p.body.total])).toEqual([
      [1, 45],
      [2, 45],
      [3, 45],
      [4, 45],
    ]);
  });

  it('shifts under a touch like every offset API, so one entity is skipped', async () => {
    const source = await start({ entities: 40 });

    const first = await getJson<RecordsPage>(`${source.url}/records-paged?page=1&limit=20`);
    source.control.touch(['e-000003']);
    const second = await getJson<RecordsPage>(`${source.url}/records-paged?page=2&limit=20`);

    const ids = new Set([...first.body.data, ...second.body.data].map((r) => r.id));
    expect(ids.has('e-000021')).toBe(false);
    expect(ids.size).toBe(39);
  });

  it('fetches a record by id and answers 404 for unknown and deleted ids', async () => {
    const source = await start({ entities: 10 });
    source.control.delete(['e-000004']);

    const found = await getJson(`${source.url}/records/e-000003`);
    const deleted = await getJson(`${source.url}/records/e-000004`);
    const unknown = await getJson(`${source.url}/records/e-999999`);

    expect(found).toMatchObject({ status: 200, body: { id: 'e-000003', version: 1 } });
    expect([deleted.status, unknown.status]).toEqual([404, 404]);
  });
});

describe('GitHub issues shape', () => {
  const query = 'state=all&sort=updated&direction=asc&per_page=30';

  it('links pages with absolute next and last URLs, and following next reaches every issue once', async () => {
    const source = await start({ entities: 95 });

    const numbers: number[] = [];
    const links: (string | null)[] = [];
    let url: string | null = `${source.url}/repos/acme/widgets/issues?${query}`;
    while (url) {
      const page: { headers: Headers; body: { number: number }[] } = await getJson(url);
      const { body } = page;
      const link = page.headers.get('link');
      numbers.push(...body.map((issue) => issue.number));
      links.push(link);
      url = /<([^>]+)>; rel="next"/.exec(link ?? '')?.[1] ?? null;
    }

    expect(numbers).toEqual(Array.from({ length: 95 }, (_, i) => i + 1));
    expect(links[0]).toContain(`<${source.url}/repos/acme/widgets/issues?${query}&page=4>; rel="last"`);
    expect(links[0]).not.toContain('rel="prev"');
    expect(links[3]).toMatch(/rel="prev".*rel="first"/);
    expect(links[3]).not.toContain('rel="next"');
  });

  it('honours since and serves GitHub issue fields, pull requests included', async () => {
    const source = await start({ entities: 95 });

    const { body } = await getJson<Record<string, unknown>[]>(
      `${source.url}/repos/acme/widgets/issues?${query}&since=2024-01-01T00:01:20Z`,
    );

    expect(body.map((issue) => issue.number)).toEqual(Array.from({ length: 15 }, (_, i) => i + 81));
    expect(body[0]).toMatchObject({
      number: 81,
      updated_at: '2024-01-01T00:01:20Z',
      user: { login: expect.any(String) },
      labels: expect.any(Array),
      html_url: 'https://github.com/acme/widgets/issues/81',
    });
    expect(body.find((issue) => issue.number === 90)).toHaveProperty('pull_request');
    expect(body.find((issue) => issue.number === 81)).not.toHaveProperty('pull_request');
  });

  it('fetches an issue by number and sends rate-limit headers on every response', async () => {
    const source = await start({ entities: 5 });

    const found = await getJson(`${source.url}/repos/acme/widgets/issues/3`);
    const missing = await getJson(`${source.url}/repos/acme/widgets/issues/6`);

    expect(found).toMatchObject({ status: 200, body: { number: 3, state: 'closed' } });
    expect(missing.status).toBe(404);
    for (const { headers } of [found, missing]) {
      expect(Number(headers.get('x-ratelimit-limit'))).toBe(5000);
      expect(Number(headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
      expect(Number(headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
      expect(headers.get('x-ratelimit-used')).not.toBeNull();
    }
  });
});

describe('what planning partitions reads', () => {
  it('GitHub: with per_page=1, rel="last" counts the issues updated since a time, and page p is the p-th oldest update', async () => {
    const source = await start({ entities: 50, latencyMs: 0 });
    const base = `${source.url}/repos/o/r/issues?state=all&sort=updated&direction=asc&per_page=1`;
    const since = '2024-01-01T00:00:10Z';
    const first = await getJson<{ number: number }[]>(`${base}&since=${since}`);
    expect(first.headers.get('link')).toMatch(/[?&]page=40>; rel="last"/);
    const at = await getJson<{ number: number; updated_at: string }[]>(`${base}&since=${since}&page=25`);
    expect(at.body.map((i) => [i.number, i.updated_at])).toEqual([[35, '2024-01-01T00:00:34Z']]);
  });

  it('GitLab: with per_page=1, X-Total counts the issues updated after a time', async () => {
    const source = await start({ entities: 50, latencyMs: 0 });
    const url = `${source.url}/api/v4/projects/g%2Fp/issues?order_by=updated_at&sort=asc&per_page=1&updated_after=2024-01-01T00:00:10.000Z&page=3`;
    const page = await getJson<{ iid: number }[]>(url);
    expect(page.headers.get('x-total')).toBe('40');
    expect(page.body.map((i) => i.iid)).toEqual([13]);
  });

  it('rest-json: a since listing of one record per page reports the total of the since listing', async () => {
    const source = await start({ entities: 50, latencyMs: 0 });
    const page = await getJson<{ data: { id: string }[]; total: number }>(
      `${source.url}/records-paged?limit=1&page=5&since=2024-01-01T00:00:10.000Z`,
    );
    expect(page.body.total).toBe(40);
    expect(page.body.data.map((r) => r.id)).toEqual(['e-000015']);
  });

  it('delays every page request by latencyMs, concurrent requests side by side as a real API serves them', async () => {
    const source = await start({ entities: 50, latencyMs: 300 });
    const started = performance.now();
    const timed = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const t0 = performance.now();
        await getJson(`${source.url}/repos/o/r/issues?per_page=1&page=${i + 1}`);
        return performance.now() - t0;
      }),
    );
    for (const ms of timed) expect(ms).toBeGreaterThanOrEqual(290);
    // Eight requests one after another would take 2.4 s.
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});

describe('control and ground truth', () => {
  it('serves chosen records broken until the source is fixed', async () => {
    const source = await start({ entities: 60, profile: { invalidRecords: 5, itemNotFound: 3 } });
    const isBroken = (r: Record<string, unknown>) =>
      typeof r.id !== 'string' || typeof r.updatedAt !== 'string';

    const before = await getJson<{ data: Record<string, unknown>[] }>(`${source.url}/records?limit=100`);
    const truth = source.truth();
    const missing = await getJson(`${source.url}/records/${truth.notFoundIds[0]}`);
    const fixed = await control(source, { action: 'fix' });
    const after = await getJson<{ data: Record<string, unknown>[] }>(`${source.url}/records?limit=100`);
    const found = await getJson(`${source.url}/records/${truth.notFoundIds[0]}`);

    expect(before.body.data).toHaveLength(60);
    expect(before.body.data.filter(isBroken)).toHaveLength(5);
    expect(truth.invalidIds).toHaveLength(5);
    expect(truth.notFoundIds).toHaveLength(3);
    expect(missing.status).toBe(404);
    expect(fixed.status).toBe(200);
    expect(after.body.data.filter(isBroken)).toHaveLength(0);
    expect(found.status).toBe(200);
    expect(source.truth()).toMatchObject({ invalidIds: [], notFoundIds: [] });
  });

  it('reflects deletes and additions in truth and listings', async () => {
    const source = await start({ entities: 10 });

    await control(source, { action: 'delete', ids: ['e-000002', 3] });
    const added = await control(source, { action: 'add', count: 2 });
    const truth = await getJson<GroundTruth>(`${source.url}/_truth`);
    const listed = await listAll(source, 'limit=100');

    expect(added.body).toMatchObject({ added: [{ id: 'e-000011' }, { id: 'e-000012' }] });
    expect(truth.body.deletedIds).toEqual(['e-000002', 'e-000003']);
    expect(truth.body.entities.map((e) => e.id)).toEqual(listed.map((r) => r.id));
    expect(listed).toHaveLength(10);
    expect(listed.at(-1)).toMatchObject({ id: 'e-000012', updatedAt: '2024-01-01T00:00:11.000Z' });
  });

  it('rejects a malformed control command with 400 and changes nothing', async () => {
    const source = await start({ entities: 3 });

    const response = await control(source, { action: 'add', count: -1 });

    expect(response.status).toBe(400);
    expect(source.truth().entities).toHaveLength(3);
  });

  it('counts pages served twice, so tests can see a client re-fetching', async () => {
    const source = await start({ entities: 30 });

    await getJson(`${source.url}/records?limit=10`);
    await getJson(`${source.url}/records?limit=10`);
    await getJson(`${source.url}/records-paged?limit=10&page=2`);
    const stats = (
      await getJson<{ pagesServed: Record<string, number>; duplicatePageServes: number }>(
        `${source.url}/_stats`,
      )
    ).body;

    expect(stats.pagesServed).toEqual({ '/records?limit=10': 2, '/records-paged?limit=10&page=2': 1 });
    expect(stats.duplicatePageServes).toBe(1);
  });

  it('stops promptly even with keep-alive connections open', async () => {
    const source = await startFakeSource({ entities: 3, seed: 1 });
    await getJson(`${source.url}/records`);

    const before = Date.now();
    await source.stop();

    expect(Date.now() - before).toBeLessThan(1_000);
    await expect(fetch(`${source.url}/records`)).rejects.toThrow();
  });
});
