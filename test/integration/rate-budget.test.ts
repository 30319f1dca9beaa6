import { beforeEach, describe, expect, it } from 'vitest';
import { credentialKey } from '../../lib/budget/credential.js';
import { startRun } from '../../lib/engine/index.js';
import { type EngineMetrics, METRIC, type MetricName } from '../../lib/observability/metrics.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import { type FakeSource, type FakeSourceOptions, SharedQuota } from '../../tools/fake-source/index.js';
import { fastRetry, putTrustedSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { freePorts } from '../support/listener.js';
import { compareWithTruth } from '../support/live.js';

/*
 * Rate budgets shared per credential (connector + origin + secret reference), end to end: sources
 * that share a token against a fake source whose quota is keyed by token, the concurrency cap
 * counted at the source, leases of crashed holders expiring, and conditional takes that never
 * hand out the same request twice.
 */

const TOKENS: Record<string, string> = {
  'ssm:/org/github-token-a': 'token-a',
  'ssm:/org/github-token-b': 'token-b',
};
const CAP = 2;

/** Counts of each metric the engine reported since the last reset. */
const counted = new Map<MetricName, number>();
const metrics: EngineMetrics = {
  count: (name, ...[value]) => void counted.set(name, (counted.get(name) ?? 0) + (value ?? 1)),
  seconds: () => {},
  flush: () => {},
};

let started = 0;
let counter = 0;

// Shared secrets are bound to explicit origins: the fake sources' ports are chosen up front.
const PORTS = await freePorts(12);

const { engine, startFake } = useEngineWithFakes('budget', {
  workers: 6,
  heartbeatIntervalMs: 500,
  metrics,
  // Real sleeps: a budget wait slept in the invocation is trusted to have served its time, so a
  // shortened one would send requests before their window opens.
  retry: fastRetry(1),
  // Waits longer than this are deferred through the queue, so a few-second window exercises it.
  maxInlineBudgetWaitMs: 200,
  secrets: async (reference) => TOKENS[reference] ?? 'unknown',
  env: {
    SHARED_SECRET_REFS: JSON.stringify(
      Object.fromEntries(
        Object.keys(TOKENS).map((ref) => [ref, PORTS.map((port) => `http://127.0.0.1:${port}`)]),
      ),
    ),
    MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL: String(CAP),
    MAX_PARTITIONS_PER_RUN: '4',
    MIN_ENTITIES_PER_PARTITION: '100',
  },
});
beforeEach(() => counted.clear());

/** A fake source on the next of the bound ports (30 entities unless `options` say otherwise). */
function fakeSource(options: Partial<FakeSourceOptions> = {}): Promise<FakeSource> {
  const index = started++;
  return startFake({ entities: 30, seed: 1_300 + index, latencyMs: 0, port: PORTS[index], ...options });
}

async function githubSource(fake: FakeSource, tokenRef: string): Promise<string> {
  const sourceId = `budget-${++counter}`;
  await putTrustedSource(engine.deps, sourceId, 'github-issues', {
    owner: 'acme',
    repo: `repo-${counter}`,
    baseUrl: fake.url,
    tokenRef,
    perPage: 10,
  });
  return sourceId;
}

async function fullRuns(sourceIds: string[]) {
  const started = await Promise.all(
    sourceIds.map((sourceId) => startRun(engine.deps, { sourceId, mode: 'full' })),
  );
  return Promise.all(started.map((s) => waitForRun(engine.deps, s.runId, undefined, 120_000)));
}

describe('a rate budget shared per credential', () => {
  it('two sources sharing a token never meet a refusal: pages wait (deferred, not failed) and both finish exactly', async () => {
    // 4 requests per 4 s for the token; the two full runs need about 8 between them.
    const quota = new SharedQuota({ limit: 4, windowSeconds: 4 });
    const fake = await fakeSource({ quota });
    const sources = [
      await githubSource(fake, 'ssm:/org/github-token-a'),
      await githubSource(fake, 'ssm:/org/github-token-a'),
    ];

    const runs = await fullRuns(sources);

    for (const run of runs) {
      expect(run.state).toBe('succeeded');
      expect(run.progress.processed).toBe(30);
      expect(run.errorCount).toBe(0);
    }
    for (const sourceId of sources) {
      expect(await compareWithTruth(engine.deps, sourceId, fake, 'github')).toMatchObject({
        missing: [],
        stale: [],
      });
      expect(await engine.deps.deadLetters.list(sourceId, { limit: 10 })).toMatchObject({ items: [] });
    }
    const stats = fake.stats();
    expect(stats.quotaRejected).toBe(0);
    expect(stats.byStatus['403']).toBeUndefined();
    expect(quota.admitted).toBe(stats.sourceRequests);
    // The quota's windows are aligned to the clock, so the first is partly gone when the runs
    // start. More than two windows' worth of requests uses up a whole window with most of it
    // left, so some page waits longer than a worker sleeps and is deferred, wherever the runs
    // started in the window.
    expect(stats.sourceRequests).toBeGreaterThan(2 * 4);
    expect(counted.get(METRIC.budgetWaits)).toBeGreaterThan(0);
    expect(counted.get(METRIC.deferrals)).toBeGreaterThan(0);
    expect(counted.get(METRIC.budgetRejected)).toBeUndefined();
  }, 120_000);

  it("learns GitLab's RateLimit-* headers the same way: two projects, one token, no refusal", async () => {
    const quota = new SharedQuota({ limit: 4, windowSeconds: 4 });
    const fake = await fakeSource({ quota });
    const sources: string[] = [];
    for (let i = 0; i < 2; i++) {
      const sourceId = `budget-${++counter}`;
      await putTrustedSource(engine.deps, sourceId, 'gitlab-issues', {
        project: `acme/project-${i}`,
        baseUrl: `${fake.url}/api/v4`,
        tokenRef: 'ssm:/org/github-token-a',
        perPage: 10,
      });
      sources.push(sourceId);
    }

    const runs = await fullRuns(sources);

    expect(runs.map((r) => [r.state, r.progress.processed])).toEqual([
      ['succeeded', 30],
      ['succeeded', 30],
    ]);
    expect(fake.stats().sourceRequests).toBeGreaterThan(4);
    expect(fake.stats().quotaRejected).toBe(0);
    expect(counted.get(METRIC.budgetWaits)).toBeGreaterThan(0);
  }, 120_000);

  it('makes the partitions of a run and another source on the token share it: no refusal, exact counts', async () => {
    const quota = new SharedQuota({ limit: 8, windowSeconds: 3 });
    const fake = await fakeSource({ entities: 240, seed: 1_377, latencyMs: 20, quota });
    const split = `budget-${++counter}`;
    await putTrustedSource(engine.deps, split, 'github-issues', {
      owner: 'acme',
      repo: 'big',
      baseUrl: fake.url,
      tokenRef: 'ssm:/org/github-token-a',
      perPage: 20,
    });
    const other = await githubSource(fake, 'ssm:/org/github-token-a');

    const [big, small] = await fullRuns([split, other]);

    expect(partitionsOf(big!).length).toBeGreaterThan(1);
    expect([big!.state, big!.progress.processed]).toEqual(['succeeded', 240]);
    expect([small!.state, small!.progress.processed]).toEqual(['succeeded', 240]);
    for (const sourceId of [split, other]) {
      expect(await compareWithTruth(engine.deps, sourceId, fake, 'github')).toMatchObject({
        missing: [],
        stale: [],
      });
    }
    const stats = fake.stats();
    // Planning reads and every partition's pages went through the budget: none was refused, and
    // never more than the cap were in flight at once.
    expect(stats.quotaRejected).toBe(0);
    expect(stats.maxInFlight).toBeLessThanOrEqual(CAP);
    expect(quota.admitted).toBe(stats.sourceRequests);
  }, 180_000);

  it('keeps budgets apart for different tokens: neither waits for the other', async () => {
    const quota = new SharedQuota({ limit: 6, windowSeconds: 3_600 });
    const fake = await fakeSource({ quota });
    const a = await githubSource(fake, 'ssm:/org/github-token-a');
    const b = await githubSource(fake, 'ssm:/org/github-token-b');

    const runs = await fullRuns([a, b]);

    expect(runs.map((r) => r.state)).toEqual(['succeeded', 'succeeded']);
    expect(fake.stats().quotaRejected).toBe(0);
    expect(counted.get(METRIC.budgetWaits)).toBeUndefined();
    const store = engine.deps.budgets!;
    const keyOf = (secretRef: string) =>
      credentialKey({ connector: 'github-issues', origin: fake.url, secretRef });
    const [budgetA, budgetB] = await Promise.all([
      store.read(keyOf('ssm:/org/github-token-a')),
      store.read(keyOf('ssm:/org/github-token-b')),
    ]);
    // Each token's record saw only its own requests: what is left is what the source says that
    // token has left (6 per window, each run used ≤ 5 of them).
    expect(budgetA).toMatchObject({ limit: 6, remaining: quota.remainingOf('token-a') });
    expect(budgetB).toMatchObject({ limit: 6, remaining: quota.remainingOf('token-b') });
    expect(quota.remainingOf('token-a')).toBeLessThan(6);
    expect(quota.remainingOf('token-b')).toBeLessThan(6);
  }, 120_000);

  it('spends the same budget for the item fetches of a retry-failed run', async () => {
    // 5 requests per 3 s: the retry's six item fetches (a slice of five, then one) do not fit the
    // window the full run's listing left, and must queue on the budget instead of meeting 403s.
    const quota = new SharedQuota({ limit: 5, windowSeconds: 3 });
    const fake = await fakeSource({ quota, profile: { invalidRecords: 6 } });
    const sourceId = await githubSource(fake, 'ssm:/org/github-token-a');
    const [full] = await fullRuns([sourceId]);
    expect(full).toMatchObject({ state: 'succeeded', errorCount: 6 });

    fake.control.fix();
    counted.clear();
    const retry = await startRun(engine.deps, { sourceId, mode: 'dlq_retry' });
    const retried = await waitForRun(engine.deps, retry.runId, undefined, 120_000);

    expect(retried.state).toBe('succeeded');
    expect(retried.progress.processed).toBe(6);
    expect(await engine.deps.deadLetters.list(sourceId, { limit: 10 })).toMatchObject({ items: [] });
    expect(fake.stats().itemFetches).toBe(6);
    expect(fake.stats().quotaRejected).toBe(0);
    expect(counted.get(METRIC.budgetWaits)).toBeGreaterThan(0);
  }, 120_000);

  it('caps the requests in flight per credential, counted at the source', async () => {
    const fake = await fakeSource({ latencyMs: 250 });
    const sources = [];
    for (let i = 0; i < 4; i++) sources.push(await githubSource(fake, 'ssm:/org/github-token-b'));

    const runs = await fullRuns(sources);

    expect(runs.every((r) => r.state === 'succeeded')).toBe(true);
    // Four runs on six workers would send four at once; the cap holds them to two, and reaches it.
    expect(fake.stats().maxInFlight).toBe(CAP);
  }, 120_000);
});
