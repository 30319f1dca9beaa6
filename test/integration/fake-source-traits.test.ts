import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEEP_NESTING,
  type FakeSource,
  type FakeSourceOptions,
  longRecordId,
  startFakeSource,
} from '../../tools/fake-source/index.js';

/** The source zoo's traits, each against the fake source's HTTP answers. */

const sources: FakeSource[] = [];
afterAll(() => Promise.all(sources.map((s) => s.stop())));

async function source(options: Partial<FakeSourceOptions>): Promise<FakeSource> {
  const started = await startFakeSource({ entities: 30, seed: 41, latencyMs: 0, ...options });
  sources.push(started);
  return started;
}

interface Page {
  data: { id: string; updatedAt: string }[];
  next_cursor: string | null;
}

async function get<T>(url: string): Promise<T> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

/** Every page of `/records` from `query`: the ids served and the cursors given. */
async function walk(s: FakeSource, query: string): Promise<{ pages: Page[]; ids: string[] }> {
  const pages: Page[] = [];
  let url: string | null = `${s.url}/records?${query}`;
  while (url !== null && pages.length < 100) {
    const page: Page = await get<Page>(url);
    pages.push(page);
    url = page.next_cursor ? `${s.url}/records?${query}&cursor=${page.next_cursor}` : null;
  }
  return { pages, ids: pages.flatMap((p) => p.data.map((r) => r.id)) };
}

/** The raw answer, not decompressed: status, headers and body bytes. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      request(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
        .on('error', reject)
        .end();
    },
  );
}

describe('source zoo traits', () => {
  it('post-limit filtering answers short pages with a continuation and hides the filtered rows everywhere', async () => {
    const s = await source({ traits: { postLimitFilter: 0.3 } });
    const { filteredIds, entities } = s.truth();

    const { pages, ids } = await walk(s, 'limit=10');

    expect(filteredIds.length).toBeGreaterThan(3);
    expect(pages.some((p) => p.data.length < 10 && p.next_cursor !== null)).toBe(true);
    expect(ids).toEqual(entities.map((e) => e.id).filter((id) => !filteredIds.includes(id)));
    expect((await fetch(`${s.url}/records/${filteredIds[0]}`)).status).toBe(404);
    expect((await fetch(`${s.url}/records/${ids[0]}`)).status).toBe(200);
  });

  it('a page cap holds for the first listings, then another applies whatever the client asks', async () => {
    const s = await source({ traits: { pageCap: { first: 7, after: 2, later: 3 } } });

    const { pages } = await walk(s, 'limit=20');

    expect(pages.map((p) => p.data.length).slice(0, 4)).toEqual([7, 7, 3, 3]);
    expect(pages.flatMap((p) => p.data)).toHaveLength(30);
  });

  it('long ids are time-ordered UUIDs, found by id, listed in creation order within a tie', async () => {
    const s = await source({ traits: { longIds: true } });
    s.control.touch([5, 3, 9], { tied: true });

    const { ids } = await walk(s, 'limit=50');

    expect(ids.every((id) => id.length === 36)).toBe(true);
    expect(ids.slice(-3)).toEqual([3, 5, 9].map((n) => longRecordId(41, n)));
    const record = await get<{ id: string }>(`${s.url}/records/${longRecordId(41, 9)}`);
    expect(record.id).toBe(longRecordId(41, 9));
    expect((await fetch(`${s.url}/records/${longRecordId(41, 9).replace(/.$/, '0')}x`)).status).toBe(404);
  });

  it.each([
    ['ms', 'inclusive', '2024-01-01T00:00:02.000Z', 'e-000003'],
    ['ms', 'exclusive', '2024-01-01T00:00:02.000Z', 'e-000004'],
    ['s', 'inclusive', '2024-01-01T00:00:02.700Z', 'e-000003'],
    ['ms', 'inclusive', '2024-01-01T00:00:02.700Z', 'e-000004'],
    ['s', 'exclusive', '2024-01-01T00:00:02.700Z', 'e-000004'],
  ] as const)('since at %s precision, %s: since=%s lists from %s', async (precision, bound, since, first) => {
    const s = await source({ traits: { since: { precision, bound } } });

    const page = await get<Page>(`${s.url}/records?limit=5&since=${since}`);
    const github = await get<{ number: number }[]>(
      `${s.url}/repos/o/r/issues?state=all&sort=updated&direction=asc&since=${since}`,
    );

    expect(page.data[0]!.id).toBe(first);
    expect(`e-${String(github[0]!.number).padStart(6, '0')}`).toBe(first);
  });

  it('hostile bodies carry an exact integer above 2^53, 1e400 and 40 levels of nesting, verbatim', async () => {
    const s = await source({ traits: { hostileBodies: 3 } });
    const { hostile, bigIntegers } = s.truth();
    const [bigId, digits] = Object.entries(bigIntegers)[0]!;

    const text = await (await fetch(`${s.url}/records?limit=50`)).text();
    const single = await (await fetch(`${s.url}/records/${bigId}`)).text();

    expect(Object.values(hostile).sort()).toEqual(['big-integer', 'deep', 'overflow']);
    expect(BigInt(digits) > 2n ** 53n).toBe(true);
    expect(text).toContain(`"big":${digits}`);
    expect(single).toContain(`"big":${digits}`);
    expect(text).toContain('"huge":1e400');
    expect(text).toContain(`"nested":${'{"a":'.repeat(DEEP_NESTING)}1`);
    expect(JSON.parse(text).data).toHaveLength(30);
  });

  it('gzip compresses answers for clients that accept it, and only for them', async () => {
    const s = await source({ traits: { gzip: true } });

    const compressed = await rawGet(`${s.url}/records?limit=5`, { 'accept-encoding': 'gzip' });
    const plain = await rawGet(`${s.url}/records?limit=5`, {});

    expect(compressed.headers['content-encoding']).toBe('gzip');
    expect(compressed.body[0]).toBe(0x1f);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString()).data).toHaveLength(5);
    expect((await get<Page>(`${s.url}/records?limit=5`)).data).toHaveLength(5);
  });

  it('a growing cursor grows by the set bytes every page and still reads the listing whole', async () => {
    const s = await source({ traits: { cursorGrowth: 300 } });

    const { pages, ids } = await walk(s, 'limit=5');

    const lengths = pages.flatMap((p) => (p.next_cursor ? [p.next_cursor.length] : []));
    expect(ids).toHaveLength(30);
    expect(lengths.at(-1)! - lengths[0]!).toBeGreaterThanOrEqual(300 * (lengths.length - 1));
  });

  it('a GitHub issue transferred away answers 301 to an issue of another repository that reuses a local number', async () => {
    const s = await source({});
    s.control.transfer([12]);

    const moved = await rawGet(`${s.url}/repos/o/r/issues/12`, {});
    const location = String(moved.headers.location);
    const followed = await get<{ number: number; repository_url: string }>(location);

    expect(moved.status).toBe(301);
    expect(location).toMatch(/\/repos\/o\/r-transferred\/issues\/\d+$/);
    expect(followed.number).not.toBe(12);
    expect(s.truth().entities.map((e) => e.number)).toContain(followed.number);
    expect(followed.repository_url).toMatch(/r-transferred$/);
    expect(s.truth().deletedIds).toContain('e-000012');
    expect(s.truth().transferredIds).toEqual(['e-000012']);
  });

  it('a rest-json record moved away answers 301 to the record under its new id', async () => {
    const s = await source({});
    s.control.transfer(['e-000004']);

    const moved = await rawGet(`${s.url}/records/e-000004`, {});
    const followed = await get<{ id: string }>(`${s.url}/records/e-000004`);

    expect(moved.status).toBe(301);
    expect(followed.id).toBe('e-000004-moved');
    expect((await walk(s, 'limit=50')).ids).not.toContain('e-000004');
  });

  it('traits switch on through the control endpoint', async () => {
    const s = await source({});
    const answer = await fetch(`${s.url}/_control`, {
      method: 'POST',
      body: JSON.stringify({ action: 'set-traits', traits: { pageCap: { first: 4, after: 0, later: 4 } } }),
    });

    expect(answer.status).toBe(200);
    expect((await get<Page>(`${s.url}/records?limit=10`)).data).toHaveLength(4);
  });
});
