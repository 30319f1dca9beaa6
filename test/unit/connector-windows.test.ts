import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ListedKey } from '../../lib/connectors/keyset.js';
import {
  type CountReader,
  cleanBoundaries,
  type PositionReader,
  planByCount,
  planByPosition,
  windowCount,
} from '../../lib/connectors/windows.js';

const iso = (ms: number) => new Date(ms).toISOString();
const BASE = Date.parse('2024-01-01T00:00:00.000Z');

/** A listing of times (ms offsets, ascending); `invalid` positions do not normalize. */
function positional(times: readonly number[], options: { tellsTotal?: boolean; invalid?: number[] } = {}) {
  const reads: number[] = [];
  const reader: PositionReader = async (index) => {
    reads.push(index);
    const t = times[index];
    const key: ListedKey | null =
      t === undefined
        ? null
        : options.invalid?.includes(index)
          ? { ok: false, ref: `x${index}` }
          : { ok: true, id: `e${index}`, at: iso(BASE + t) };
    return { key, total: options.tellsTotal === false ? null : times.length };
  };
  return { reader, reads };
}

/** Counts of `since` listings over a list of times (ms offsets). */
function counting(times: readonly number[]) {
  let requests = 0;
  const reader: CountReader = async (since) => {
    requests += 1;
    const from = since === null ? Number.NEGATIVE_INFINITY : Date.parse(since) - BASE;
    const listed = times.filter((t) => t >= from);
    const first = listed[0];
    return {
      total: listed.length,
      first: first === undefined ? null : { ok: true, id: 'f', at: iso(BASE + first) },
    };
  };
  return { reader, requests: () => requests };
}

describe('windowCount', () => {
  it.each([
    { total: 1_000, maxWindows: 8, min: 100, k: 8 },
    { total: 450, maxWindows: 8, min: 100, k: 4 },
    { total: 99, maxWindows: 8, min: 100, k: 1 },
    { total: 0, maxWindows: 8, min: 100, k: 1 },
    { total: 10, maxWindows: 8, min: 0, k: 8 },
  ])('$total entities, at most $maxWindows windows of ≥ $min → $k', ({ total, maxWindows, min, k }) => {
    expect(windowCount(total, { maxWindows, minEntitiesPerWindow: min })).toBe(k);
  });
});

describe('cleanBoundaries', () => {
  it('keeps valid times strictly after the first entity, ascending, each once', () => {
    expect(
      cleanBoundaries([iso(BASE + 3), null, iso(BASE + 1), iso(BASE + 3), iso(BASE)], iso(BASE)),
    ).toEqual([iso(BASE + 1), iso(BASE + 3)]);
  });
});

describe('planByPosition', () => {
  it('reads the count once, then the time at each quantile position', async () => {
    const times = Array.from({ length: 100 }, (_, i) => i * 1_000);
    const { reader, reads } = positional(times);
    const plan = await planByPosition(reader, { maxWindows: 4, minEntitiesPerWindow: 10 });
    expect(plan).toEqual({
      boundaries: [iso(BASE + 25_000), iso(BASE + 50_000), iso(BASE + 75_000)],
      total: 100,
      requests: 4,
    });
    expect(reads).toEqual([0, 25, 50, 75]);
  });

  it('follows the data, not the clock: a burst of entities gets most of the windows', async () => {
    // 10 entities a day apart, then 90 within one minute.
    const times = [
      ...Array.from({ length: 10 }, (_, i) => i * 86_400_000),
      ...Array.from({ length: 90 }, (_, i) => 10 * 86_400_000 + i * 500),
    ];
    const plan = await planByPosition(positional(times).reader, { maxWindows: 4, minEntitiesPerWindow: 10 });
    expect(plan.boundaries.filter((b) => b >= iso(BASE + 10 * 86_400_000))).toHaveLength(3);
  });

  it('collapses equal quantiles into one boundary (a tie group wider than a window)', async () => {
    const times = [0, 1, 2, 3, 4, 5, ...Array.from({ length: 94 }, () => 9)];
    const plan = await planByPosition(positional(times).reader, { maxWindows: 4, minEntitiesPerWindow: 10 });
    expect(plan.boundaries).toEqual([iso(BASE + 9)]);
  });

  it('reads the next position when the entity at a quantile does not normalize, and drops the boundary after three', async () => {
    const times = Array.from({ length: 100 }, (_, i) => i);
    const near = await planByPosition(positional(times, { invalid: [50] }).reader, {
      maxWindows: 4,
      minEntitiesPerWindow: 10,
    });
    expect(near.boundaries).toEqual([iso(BASE + 25), iso(BASE + 51), iso(BASE + 75)]);
    expect(near.requests).toBe(5);
    const dropped = await planByPosition(positional(times, { invalid: [50, 51, 52] }).reader, {
      maxWindows: 4,
      minEntitiesPerWindow: 10,
    });
    expect(dropped.boundaries).toEqual([iso(BASE + 25), iso(BASE + 75)]);
  });

  it('plans no windows for an empty or small listing', async () => {
    expect(await planByPosition(positional([]).reader, { maxWindows: 4, minEntitiesPerWindow: 1 })).toEqual({
      boundaries: [],
      total: 0,
      requests: 1,
    });
    const small = await planByPosition(positional([1, 2, 3]).reader, {
      maxWindows: 4,
      minEntitiesPerWindow: 2,
    });
    expect(small).toEqual({ boundaries: [], total: 3, requests: 1 });
  });

  it('finds the count by reads of one entity when the source does not tell it', async () => {
    const times = Array.from({ length: 12_345 }, (_, i) => i);
    const { reader } = positional(times, { tellsTotal: false });
    const plan = await planByPosition(
      reader,
      { maxWindows: 2, minEntitiesPerWindow: 10 },
      { countAbove: 10_000 },
    );
    expect(plan.total).toBe(12_345);
    expect(plan.boundaries).toEqual([iso(BASE + Math.ceil(12_345 / 2))]);
    // Doubling from 10,000 once, then bisecting 10,000 positions: about 15 reads, not 12,345.
    expect(plan.requests).toBeLessThan(20);
  });

  it('returns strictly increasing boundaries after the first entity for any listing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(fc.integer({ min: 0, max: 50 }), { maxLength: 200 })
          .map((ts) => [...ts].sort((a, b) => a - b)),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 20 }),
        async (times, maxWindows, min) => {
          const plan = await planByPosition(positional(times).reader, {
            maxWindows,
            minEntitiesPerWindow: min,
          });
          expect(plan.boundaries.length).toBeLessThanOrEqual(maxWindows - 1);
          plan.boundaries.forEach((b, i) => {
            expect(b > iso(BASE + times[0]!)).toBe(true);
            if (i > 0) expect(b > plan.boundaries[i - 1]!).toBe(true);
          });
          if (times.length < 2 * Math.max(1, min)) expect(plan.boundaries).toEqual([]);
        },
      ),
    );
  });
});

describe('planByCount', () => {
  it('bisects each boundary until the entities at or after it are within a quarter window of its share', async () => {
    // Skewed: half the entities in the first hour, half over the following year.
    const times = [
      ...Array.from({ length: 500 }, (_, i) => i * 7_200),
      ...Array.from({ length: 500 }, (_, i) => 3_600_000 + i * 63_072_000),
    ];
    const { reader, requests } = counting(times);
    const plan = await planByCount(
      reader,
      null,
      { maxWindows: 4, minEntitiesPerWindow: 10 },
      { now: BASE + 40_000_000_000 },
    );
    expect(plan.boundaries).toHaveLength(3);
    expect(plan.total).toBe(1_000);
    const edges = [
      Number.NEGATIVE_INFINITY,
      ...plan.boundaries.map((b) => Date.parse(b) - BASE),
      Number.POSITIVE_INFINITY,
    ];
    for (let w = 0; w < 4; w++) {
      const size = times.filter((t) => t >= edges[w]! && t < edges[w + 1]!).length;
      expect(Math.abs(size - 250)).toBeLessThanOrEqual(2 * 62);
    }
    expect(plan.requests).toBe(requests());
  });

  it('cuts windows at whole seconds for a source whose since reads whole seconds, asking only such times', async () => {
    // A thousand entities 7.3 s apart starting at .250: bisection over ms would stop mid-second.
    const times = Array.from({ length: 1_000 }, (_, i) => 250 + i * 7_300);
    const { reader } = counting(times);
    const asked: string[] = [];
    const plan = await planByCount(
      async (since) => {
        if (since !== null) asked.push(since);
        return reader(since);
      },
      null,
      { maxWindows: 4, minEntitiesPerWindow: 10 },
      { now: BASE + 8_000_000, precision: 's' },
    );
    expect(plan.boundaries).toHaveLength(3);
    for (const time of [...plan.boundaries, ...asked]) expect(time).toMatch(/:\d\d\.000Z$/);
    // Two-sided: at millisecond precision the same listing is cut mid-second.
    const fine = await planByCount(
      reader,
      null,
      { maxWindows: 4, minEntitiesPerWindow: 10 },
      { now: BASE + 8_000_000 },
    );
    expect(fine.boundaries.some((b) => !b.endsWith('.000Z'))).toBe(true);
  });

  it('cuts positional quantiles to whole seconds for such a source', async () => {
    const times = Array.from({ length: 400 }, (_, i) => 250 + i * 1_300);
    const { reader } = positional(times);
    const plan = await planByPosition(
      reader,
      { maxWindows: 4, minEntitiesPerWindow: 10 },
      { precision: 's' },
    );
    expect(plan.boundaries).toHaveLength(3);
    for (const b of plan.boundaries) expect(b).toMatch(/\.000Z$/);
  });

  it('plans no windows when the source gives no count or the listing is small', async () => {
    const noCount: CountReader = async () => ({ total: null, first: { ok: true, id: 'a', at: iso(BASE) } });
    expect(
      await planByCount(noCount, null, { maxWindows: 4, minEntitiesPerWindow: 1 }, { now: BASE + 1e6 }),
    ).toEqual({
      boundaries: [],
      total: null,
      requests: 1,
    });
    const small = counting([1, 2, 3]).reader;
    expect(
      (await planByCount(small, null, { maxWindows: 4, minEntitiesPerWindow: 2 }, { now: BASE + 1e6 }))
        .boundaries,
    ).toEqual([]);
  });

  it('plans from since: every boundary is after it', async () => {
    const times = Array.from({ length: 200 }, (_, i) => i * 1_000);
    const since = iso(BASE + 100_000);
    const plan = await planByCount(
      counting(times).reader,
      since,
      { maxWindows: 4, minEntitiesPerWindow: 5 },
      { now: BASE + 1e9 },
    );
    expect(plan.total).toBe(100);
    expect(plan.boundaries).toHaveLength(3);
    for (const b of plan.boundaries) expect(b > since).toBe(true);
  });
});
