import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { SOURCE_TEST_TIMEOUT_MS } from '../../lib/api/source-test.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { credentialKey } from '../../lib/budget/credential.js';
import { MAX_CONCURRENT_SOURCE_TESTS } from '../../lib/store/source-test-leases.js';
import { type FakeSource, startFakeSource } from '../../tools/fake-source/index.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';
import { fakeRestConfig } from '../support/harness.js';
import { type SlowHost, startSlowHost } from '../support/listener.js';

/** `POST /sources/{id}/test`: one page fetched as a run would, nothing stored. */

let aws: TestAws;
let deps: ApiDeps;
let fake: FakeSource;

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('source-test'));
  fake = await startFakeSource({ entities: 250, seed: 42, profile: { invalidRecords: 0 } });
});
afterAll(async () => {
  await fake.stop();
  destroyAwsClients(aws.clients);
});

const call = (method: string, url: string, body?: unknown) => callApi(deps, method, url, body);

describe('a connection check', () => {
  it('fetches one page and reports the rate budget and a normalized sample, storing nothing', async () => {
    await call('PUT', '/sources/check-ok', { connector: 'rest-json', config: fakeRestConfig(fake.url) });
    const served = fake.stats().sourceRequests;

    const res = await call('POST', '/sources/check-ok/test');

    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      ok: true,
      auth: 'not_configured',
      request: { url: `${fake.url}/records`, status: 200 },
      page: { items: 100, total: 250, hasNextPage: true },
      sample: { id: expect.any(String), version: expect.any(String) },
      invalidOnPage: 0,
      problem: null,
    });
    expect(res.json.rateLimit).toMatchObject({ limit: expect.any(Number), remaining: expect.any(Number) });
    expect(fake.stats().sourceRequests).toBe(served + 1);
    expect((await call('GET', '/sources/check-ok/runs')).json.items).toEqual([]);
    expect(await deps.items.listAll('check-ok')).toEqual([]);
  });

  it('a 401 to a config without credentials is no credentials configured, not credentials refused', async () => {
    const refusing = await startFakeSource({ entities: 10, seed: 1, profile: { forceStatus: 401 } });
    try {
      await call('PUT', '/sources/check-401', {
        connector: 'rest-json',
        config: fakeRestConfig(refusing.url),
      });
      const res = await call('POST', '/sources/check-401/test');
      expect(res.json).toMatchObject({
        ok: false,
        auth: 'not_configured',
        request: { status: 401 },
        problem: { errorClass: 'permanent' },
        sample: null,
      });
    } finally {
      await refusing.stop();
    }
  });
});

describe('a connection check says what went wrong, in the words of its cause', () => {
  it('a refused connection names where the request went and that nothing answered', async () => {
    const { createServer } = await import('node:net');
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    await call('PUT', '/sources/check-closed', {
      connector: 'rest-json',
      config: fakeRestConfig(`http://127.0.0.1:${closed}`),
    });
    const res = await call('POST', '/sources/check-closed/test');
    expect(res.json).toMatchObject({
      ok: false,
      request: { url: `http://127.0.0.1:${closed}/records`, status: null },
      problem: { errorClass: 'transient' },
    });
  });

  it('a list missing where itemsPath points is the config to fix (permanent), not a transient fault', async () => {
    await call('PUT', '/sources/check-path', {
      connector: 'rest-json',
      config: { ...fakeRestConfig(fake.url), itemsPath: 'results' },
    });
    const res = await call('POST', '/sources/check-path/test');
    expect(res.json).toMatchObject({
      ok: false,
      request: { status: 200 },
      problem: { errorClass: 'permanent' },
    });
    expect(res.json.problem.reason).toMatch(
      /`results` from .* is not an array: the source answered 200, so the config, not the source, is wrong \(check `itemsPath`\)/,
    );
  });
});

describe("a connection check spends the credential's rate budget", () => {
  let limited: FakeSource;
  let key: string;
  beforeAll(async () => {
    limited = await startFakeSource({ entities: 5, seed: 3, profile: { invalidRecords: 0 } });
    key = credentialKey({ connector: 'rest-json', origin: new URL(limited.url).origin, secretRef: null });
  });
  afterAll(() => limited.stop());

  it('takes a request from the budget and settles it with what the source said', async () => {
    await call('PUT', '/sources/check-budget', {
      connector: 'rest-json',
      config: fakeRestConfig(limited.url),
    });

    const res = await call('POST', '/sources/check-budget/test');

    const budget = await deps.budgets!.read(key);
    expect(res.json.ok).toBe(true);
    expect(budget).toMatchObject({
      limit: res.json.rateLimit.limit,
      remaining: res.json.rateLimit.remaining,
    });
    expect(budget?.leases).toEqual({}); // the request's lease was released
  });

  it('sends nothing while the budget is spent, and says until when', async () => {
    await call('PUT', '/sources/check-spent', {
      connector: 'rest-json',
      config: fakeRestConfig(limited.url),
    });
    const resetAt = Date.now() + 600_000;
    await deps.budgets!.settle(
      key,
      { connector: 'rest-json', origin: new URL(limited.url).origin },
      Date.now(),
      { maxConcurrent: 0, leaseMs: 60_000 },
      null,
      { limit: 5_000, remaining: 0, resetAt },
    );
    const served = limited.stats().sourceRequests;

    const res = await call('POST', '/sources/check-spent/test');

    expect(limited.stats().sourceRequests).toBe(served);
    expect(res.json).toMatchObject({ ok: false, request: { status: null } });
    expect(res.json.problem).toMatchObject({ errorClass: 'transient' });
    expect(res.json.problem.reason).toMatch(/rate budget is spent until/);
  });
});

describe('a connection check is bounded', () => {
  let slow: SlowHost;
  beforeAll(async () => {
    slow = await startSlowHost(60_000);
  });
  afterAll(() => slow.stop());

  it(`gives a host that answers after 60 s at most ${SOURCE_TEST_TIMEOUT_MS / 1_000} s, and says so`, async () => {
    await call('PUT', '/sources/check-slow', { connector: 'rest-json', config: fakeRestConfig(slow.url) });
    const started = Date.now();

    const res = await call('POST', '/sources/check-slow/test');

    expect(Date.now() - started).toBeLessThan(SOURCE_TEST_TIMEOUT_MS + 2_000);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ ok: false, page: null, problem: { errorClass: 'transient' } });
    expect(res.json.problem.reason).toBe(
      'the source did not answer within 5 s, the most a connection check waits (a run waits longer, and retries)',
    );
  }, 20_000);

  it(`lets ${MAX_CONCURRENT_SOURCE_TESTS} of 20 concurrent checks of one source run; the rest answer 429 with Retry-After`, async () => {
    await call('PUT', '/sources/check-flood', { connector: 'rest-json', config: fakeRestConfig(slow.url) });
    const before = slow.requests();

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/sources/check-flood/test')),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_CONCURRENT_SOURCE_TESTS);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(20 - MAX_CONCURRENT_SOURCE_TESTS);
    expect(refused[0]?.headers['retry-after']).toBe('5');
    expect(refused[0]?.json.detail).toMatch(/2 connection checks of source check-flood are running/);
    expect(slow.requests() - before).toBe(MAX_CONCURRENT_SOURCE_TESTS);
    // The slots were given back: the next check runs (and times out against the slow host).
    expect((await call('POST', '/sources/check-flood/test')).status).toBe(200);
  }, 30_000);

  it("another source's checks have their own slots", async () => {
    await call('PUT', '/sources/check-busy', { connector: 'rest-json', config: fakeRestConfig(slow.url) });
    await call('PUT', '/sources/check-free', { connector: 'rest-json', config: fakeRestConfig(fake.url) });
    const busy = Array.from({ length: MAX_CONCURRENT_SOURCE_TESTS + 1 }, () =>
      call('POST', '/sources/check-busy/test'),
    );

    const free = await call('POST', '/sources/check-free/test');

    expect(free.json.ok).toBe(true);
    expect((await Promise.all(busy)).map((a) => a.status)).toContain(429);
  }, 20_000);
});

describe('runs across sources', () => {
  it('lists runs of every source, filtered by state', async () => {
    for (const id of ['across-a', 'across-b'])
      await call('PUT', `/sources/${id}`, { connector: 'rest-json', config: fakeRestConfig(fake.url) });
    const a = (await call('POST', '/sources/across-a/runs', { mode: 'full' })).json;
    const b = (await call('POST', '/sources/across-b/runs', { mode: 'full' })).json;
    await call('POST', `/runs/${b.runId}/cancel`);

    const queued = await call('GET', '/runs?state=queued&limit=100');
    const cancelled = await call('GET', '/runs?state=cancelled&limit=100');
    const all = await call('GET', '/runs?limit=100');

    const ids = (page: { json: { items: { runId: string }[] } }) => page.json.items.map((r) => r.runId);
    expect(ids(queued)).toContain(a.runId);
    expect(ids(queued)).not.toContain(b.runId);
    expect(ids(cancelled)).toEqual([b.runId]);
    expect(ids(all)).toEqual(expect.arrayContaining([a.runId, b.runId]));
  });
});
