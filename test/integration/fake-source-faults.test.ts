import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeSource,
  type FakeSourceOptions,
  FaultInjector,
  resolveProfile,
  startFakeSource,
} from '../../tools/fake-source/index.js';

const started: FakeSource[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((source) => source.stop()));
});

async function start(options: Partial<FakeSourceOptions>): Promise<FakeSource> {
  const source = await startFakeSource({ entities: 100, seed: 42, latencyMs: 0, ...options });
  started.push(source);
  return source;
}

const KEYS = [
  '/records?limit=10',
  '/records?limit=20',
  '/records-paged?limit=10&page=2',
  '/records/e-000007',
];

/** Status sequence per key after `rounds` requests each, issued round-robin or key after key. */
async function statusesByKey(source: FakeSource, rounds: number, order: 'interleaved' | 'grouped') {
  const result = new Map<string, number[]>(KEYS.map((key) => [key, []]));
  const plan =
    order === 'grouped'
      ? KEYS.flatMap((key) => Array<string>(rounds).fill(key))
      : Array.from({ length: rounds }, () => KEYS).flat();
  for (const key of plan) {
    const response = await fetch(`${source.url}${key}`);
    await response.arrayBuffer();
    result.get(key)!.push(response.status);
  }
  return Object.fromEntries(result);
}

function longestFailureRun(statuses: readonly number[]): number {
  let longest = 0;
  let current = 0;
  for (const status of statuses) {
    current = status >= 400 ? current + 1 : 0;
    longest = Math.max(longest, current);
  }
  return longest;
}

describe('deterministic faults', () => {
  const profile = { transientRate: 0.3, rate429: 0.2 };

  it('gives every request key the same fault sequence for the same seed, whatever the request order', async () => {
    const a = await start({ profile });
    const b = await start({ profile });
    const otherSeed = await start({ profile, seed: 43 });

    const first = await statusesByKey(a, 12, 'interleaved');
    const second = await statusesByKey(b, 12, 'grouped');
    const third = await statusesByKey(otherSeed, 12, 'grouped');

    expect(second).toEqual(first);
    expect(third).not.toEqual(first);
    expect(
      Object.values(first)
        .flat()
        .filter((s) => s !== 200).length,
    ).toBeGreaterThan(0);
  });

  it('never fails one key more than maxConsecutiveFailures times in a row', async () => {
    const source = await start({ profile: { transientRate: 0.9 } });

    const statuses = (await statusesByKey(source, 40, 'grouped'))['/records?limit=10']!;

    expect(longestFailureRun(statuses)).toBe(3);
  });

  it('bounds failure runs for any seed, rates and bound (property)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.double({ min: 0, max: 0.6, noNaN: true }),
        fc.double({ min: 0, max: 0.4, noNaN: true }),
        fc.integer({ min: 0, max: 5 }),
        (seed, transientRate, rate429, maxConsecutiveFailures) => {
          const faults = new FaultInjector(
            seed,
            resolveProfile({ transientRate, rate429, maxConsecutiveFailures }),
            () => 0,
          );
          const kinds = Array.from(
            { length: 40 },
            () => faults.decide('/records?limit=5', '/records').decision.kind,
          );
          const statuses = kinds.map((kind) => (kind === 'none' ? 200 : 500));
          expect(longestFailureRun(statuses)).toBeLessThanOrEqual(maxConsecutiveFailures);
        },
      ),
    );
  });

  it('lets a client with 5 attempts per page list everything under the realistic profile', async () => {
    const source = await start({ profile: 'realistic', entities: 600 });

    const ids: string[] = [];
    let cursor: string | null = null;
    let failures = 0;
    do {
      const url: string = `${source.url}/records?limit=5${cursor ? `&cursor=${cursor}` : ''}`;
      let response = await fetch(url);
      for (let attempt = 2; attempt <= 5 && !response.ok; attempt++) {
        failures += 1;
        await response.arrayBuffer();
        response = await fetch(url);
      }
      const page = (await response.json()) as { data: { id: unknown }[]; next_cursor: string | null };
      ids.push(
        ...page.data.map((r) => String(typeof r.id === 'string' ? r.id : (r.id as { value: string }).value)),
      );
      cursor = page.next_cursor;
    } while (cursor);

    expect(new Set(ids).size).toBe(600);
    expect(failures).toBeGreaterThan(0);
    expect(source.truth().invalidIds).toHaveLength(15);
  });
});

describe('fault shapes', () => {
  it('answers 429 with a Retry-After inside the profile range during a storm', async () => {
    const source = await start({ profile: 'storm' });

    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => fetch(`${source.url}/records?limit=1&n=${i}`)),
    );

    const throttled = responses.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(30);
    expect(throttled.length).toBeLessThan(100);
    expect(new Set(throttled.map((r) => r.headers.get('retry-after')))).toEqual(new Set(['1', '2']));
  });

  it('opens a GitHub rate-limit window every Nth request and closes it at the reset time', async () => {
    let clock = 1_800_000_000_000;
    const source = await start({
      profile: { githubRateLimitEvery: 3, rateLimitWindowSeconds: 5 },
      now: () => clock,
    });
    const issues = (page: number) => fetch(`${source.url}/repos/o/r/issues?state=all&page=${page}`);

    const statuses = [(await issues(1)).status, (await issues(2)).status];
    const windowEndsAt = clock + 5_000;
    const limited = await issues(3);
    const limitedRest = await fetch(`${source.url}/records?limit=5`);
    clock = windowEndsAt;
    const after = await issues(3);

    expect(statuses).toEqual([200, 200]);
    expect(limited.status).toBe(403);
    expect(await limited.json()).toMatchObject({ message: 'API rate limit exceeded' });
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(String(windowEndsAt / 1_000));
    expect(limitedRest.status).toBe(429);
    expect(limitedRest.headers.get('retry-after')).toBe('5');
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).not.toBe('0');
  });

  it('answers every source request 401 under the unauthorized profile, while truth stays readable', async () => {
    const source = await start({ profile: 'unauthorized' });

    const pages = await Promise.all(
      Array.from({ length: 6 }, () => fetch(`${source.url}/repos/o/r/issues?page=1`)),
    );
    const truth = await fetch(`${source.url}/_truth`);

    expect(pages.map((r) => r.status)).toEqual(Array(6).fill(401));
    expect(await pages[0]!.json()).toEqual({ message: 'Bad credentials' });
    expect(truth.status).toBe(200);
  });

  it('heals at once when the profile is switched to none over HTTP', async () => {
    const source = await start({ profile: 'unauthorized' });

    const before = await fetch(`${source.url}/records`);
    const switched = await fetch(`${source.url}/_control`, {
      method: 'POST',
      body: JSON.stringify({ action: 'set-profile', profile: 'none' }),
    });
    const after = await fetch(`${source.url}/records`);

    expect([before.status, switched.status, after.status]).toEqual([401, 200, 200]);
  });

  it('applies a per-path override to matching requests only', async () => {
    const source = await start({
      profile: { perPathOverrides: { '/records/*': { forceStatus: 500 } } },
    });

    const item = await fetch(`${source.url}/records/e-000001`);
    const listing = await fetch(`${source.url}/records?limit=5`);

    expect([item.status, listing.status]).toEqual([500, 200]);
  });

  it('answers 502 with an HTML page, as a proxy in front of an API does', async () => {
    const source = await start({ profile: { transientRate: 1, maxConsecutiveFailures: 1_000 } });

    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => fetch(`${source.url}/records?limit=1&n=${i}`)),
    );

    const badGateway = responses.find((r) => r.status === 502);
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([500, 502, 503]));
    expect(badGateway?.headers.get('content-type')).toBe('text/html');
    expect(await badGateway?.text()).toContain('502 Bad Gateway');
  });
});
