import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSource, GITLAB_DEFAULT_PER_PAGE, startFakeSource } from '../../tools/fake-source/index.js';

/** The fake source's GitLab shape answers as GitLab's REST API v4 does (see tools/fake-source/gitlab.ts). */

let fake: FakeSource;
let big: FakeSource;
beforeAll(async () => {
  fake = await startFakeSource({ entities: 45, seed: 3, latencyMs: 0 });
  big = await startFakeSource({ entities: 10_050, seed: 4, latencyMs: 0 });
});
afterAll(async () => {
  await fake.stop();
  await big.stop();
});

const issues = (source: FakeSource, query = '', project = 'acme%2Fapi') =>
  fetch(`${source.url}/api/v4/projects/${project}/issues${query}`);

describe('fake GitLab issues', () => {
  it('defaults to 20 per page, newest created first, every state, with offset pagination headers', async () => {
    const response = await issues(fake);
    const body = (await response.json()) as { iid: number; state: string }[];
    expect(body).toHaveLength(GITLAB_DEFAULT_PER_PAGE);
    expect(body[0]?.iid).toBe(45);
    expect(new Set(body.map((i) => i.state))).toEqual(new Set(['opened', 'closed']));
    expect(
      Object.fromEntries(
        ['x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages'].map((h) => [
          h,
          response.headers.get(h),
        ]),
      ),
    ).toEqual({
      'x-page': '1',
      'x-per-page': '20',
      'x-next-page': '2',
      'x-prev-page': '',
      'x-total': '45',
      'x-total-pages': '3',
    });
    expect(response.headers.get('link')).toMatch(/rel="next".*rel="first".*rel="last"/);
    expect(response.headers.get('ratelimit-remaining')).not.toBeNull();
  });

  it('filters updated_after inclusively and orders by updated_at ascending', async () => {
    const all = (await (await issues(fake, '?order_by=updated_at&sort=asc&per_page=100')).json()) as {
      updated_at: string;
    }[];
    const from = all[10]!.updated_at;
    const response = await issues(fake, `?order_by=updated_at&sort=asc&per_page=100&updated_after=${from}`);
    const after = (await response.json()) as { updated_at: string }[];
    expect(after[0]?.updated_at).toBe(from);
    expect(after).toHaveLength(35);
    expect(response.headers.get('x-next-page')).toBe('');
  });

  it('leaves totals and rel="last" out above 10,000 results, as GitLab does', async () => {
    const response = await issues(big, '?per_page=100');
    expect(response.headers.get('x-total')).toBeNull();
    expect(response.headers.get('x-total-pages')).toBeNull();
    expect(response.headers.get('link')).not.toMatch(/rel="last"/);
    expect(response.headers.get('x-next-page')).toBe('2');
  });

  it('answers 400 for an invalid parameter, and a numeric project id works like a path', async () => {
    expect((await issues(fake, '?order_by=title')).status).toBe(400);
    expect((await issues(fake, '?per_page=5', '4242')).status).toBe(200);
  });

  it('serves one issue by iid, and 404 with GitLab’s message for an unknown one', async () => {
    const found = await fetch(`${fake.url}/api/v4/projects/acme%2Fapi/issues/3`);
    expect(((await found.json()) as { iid: number }).iid).toBe(3);
    const missing = await fetch(`${fake.url}/api/v4/projects/acme%2Fapi/issues/999`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: '404 Not found' });
  });
});
