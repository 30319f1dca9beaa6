import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSource, SharedQuota, startFakeSource } from '../../tools/fake-source/index.js';

/*
 * The fake source's shared-quota mode: a quota per token, across repositories (and across fake
 * sources given the same instance), answered the way GitHub and GitLab answer an exhausted window.
 */

let clock = Date.parse('2026-12-01T00:00:05Z');
const quota = new SharedQuota({ limit: 2, windowSeconds: 10, now: () => clock });
let first: FakeSource;
let second: FakeSource;

beforeAll(async () => {
  first = await startFakeSource({ entities: 5, seed: 3, latencyMs: 0, quota, now: () => clock });
  second = await startFakeSource({ entities: 5, seed: 4, latencyMs: 0, quota, now: () => clock });
});
afterAll(async () => {
  await first.stop();
  await second.stop();
});

function get(source: FakeSource, path: string, headers: Record<string, string>) {
  return fetch(`${source.url}${path}`, { headers });
}

describe('shared-quota mode', () => {
  it('counts a token across repositories and sources, refuses past the limit like GitHub, and resets with the window', async () => {
    const token = { authorization: 'Bearer shared' };
    const a = await get(first, '/repos/acme/one/issues', token);
    expect(a.status).toBe(200);
    expect(a.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(a.headers.get('x-ratelimit-reset')).toBe(String(Date.parse('2026-12-01T00:00:10Z') / 1_000));
    expect((await get(second, '/repos/acme/two/issues', token)).status).toBe(200);

    const refused = await get(first, '/repos/acme/three/issues', token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ message: 'API rate limit exceeded' });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // Another token has its own quota; GitLab's shape answers with RateLimit-*.
    const other = await get(first, '/api/v4/projects/acme%2Fp/issues', { 'private-token': 'other' });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('1');
    expect(other.headers.get('ratelimit-limit')).toBe('2');

    expect(quota.rejected).toBe(1);
    expect(first.stats().quotaRejected + second.stats().quotaRejected).toBe(1);
    clock = Date.parse('2026-12-01T00:00:10Z');
    expect((await get(first, '/repos/acme/one/issues', token)).status).toBe(200);
  });

  it('answers the GitLab shape with a 403 carrying the quota as RateLimit-*', async () => {
    const token = { 'private-token': 'gitlab' };
    await get(first, '/api/v4/projects/acme%2Fp/issues', token);
    await get(first, '/api/v4/projects/acme%2Fp/issues', token);
    const refused = await get(first, '/api/v4/projects/acme%2Fp/issues', token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-limit')).toBe('2');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
