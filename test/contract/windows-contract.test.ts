import { afterAll, describe, expect, it } from 'vitest';
import type { WindowPlan, WindowRequest } from '../../lib/connectors/contract.js';
import { ClassifiedError } from '../../lib/retry/errors.js';
import { latest, run, runWindows, windowsOf } from './streams.js';
import { HTTP_SHAPES, type HttpShape, httpSubject, type Subject } from './subjects.js';

/**
 * The partition contract (README: connector authoring guide, "Partitions"). Every connector that
 * implements `planWindows` is checked the same way, against the fake source:
 *
 * 1. the plan's boundaries are ascending, strictly after the listing's first entity, at most
 *    `maxWindows − 1` of them, and cut the listing into windows of similar size;
 * 2. fewer entities than `maxWindows × minEntitiesPerWindow` give fewer windows, or none;
 * 3. the windows, each read through `ctx.window`, deliver every entity exactly once — from the
 *    start or from a `since`, and when a tie group wider than a window collapses boundaries;
 * 4. windows read in turns while the source is edited lose nothing: with one incremental run from
 *    the partitioned run's watermark, every live entity is held at its latest version, and no
 *    version is delivered by two windows;
 * 5. a partition resumes from each of its checkpoints as if uninterrupted;
 * 6. the plan's requests fail and classify as the connector's other requests do.
 *
 * A stream the connector cannot split answers an empty plan without spending a request, and a
 * window it cannot read is refused.
 */

const subjects: Subject[] = [];
let seed = 0;

afterAll(async () => {
  await Promise.all(subjects.map((s) => s.stop()));
});

async function subject(name: HttpShape, entities?: number): Promise<Subject> {
  seed += 1;
  const made = await httpSubject(name, 9_000 + seed, entities);
  subjects.push(made);
  return made;
}

function plan(s: Subject, request: WindowRequest, since: string | null = null): Promise<WindowPlan> {
  if (!s.connector.planWindows) throw new Error(`${s.name} does not implement planWindows`);
  return s.connector.planWindows(s.config, request, s.ctx(since));
}

/** Truth entities per window: how many versions fall in each `[from, until)`. */
function windowSizes(truth: Map<string, string>, boundaries: readonly string[]): number[] {
  return windowsOf(boundaries).map(
    (w) =>
      [...truth.values()].filter((v) => (w.from === null || v >= w.from) && (w.until === null || v < w.until))
        .length,
  );
}

describe.each(HTTP_SHAPES)('partition contract: %s', (name) => {
  it('plans ascending boundaries after the first entity that cut the listing into windows of similar size', async () => {
    const s = await subject(name);
    const truth = await s.truth();
    const result = await plan(s, { maxWindows: 4, minEntitiesPerWindow: 5 });
    const first = [...truth.values()].sort()[0]!;
    expect(result.boundaries).toHaveLength(3);
    expect([...result.boundaries].sort()).toEqual(result.boundaries);
    expect(new Set(result.boundaries).size).toBe(result.boundaries.length);
    for (const b of result.boundaries) expect(b > first).toBe(true);
    expect(result.total === null || result.total === 45).toBe(true);
    expect(result.requests).toBeGreaterThanOrEqual(1);
    // 45 entities in 4 windows: each within half a share of 11.25.
    for (const size of windowSizes(truth, result.boundaries)) {
      expect(size).toBeGreaterThanOrEqual(6);
      expect(size).toBeLessThanOrEqual(17);
    }
  });

  it('gives fewer windows, or none, when the listing is small for maxWindows × minEntitiesPerWindow', async () => {
    const s = await subject(name);
    expect((await plan(s, { maxWindows: 8, minEntitiesPerWindow: 10 })).boundaries).toHaveLength(3);
    expect((await plan(s, { maxWindows: 8, minEntitiesPerWindow: 46 })).boundaries).toEqual([]);
  });

  it('windows read through ctx.window deliver every entity exactly once', async () => {
    const s = await subject(name);
    const result = await plan(s, { maxWindows: 4, minEntitiesPerWindow: 5 });
    const partitioned = await runWindows(s, result.boundaries);
    const ids = partitioned.windows.flatMap((w) => w.entities.map(([id]) => id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(latest(...partitioned.windows)).toEqual(await s.truth());
    expect(partitioned.windows.every((w) => w.entities.length > 0)).toBe(true);
  });

  it('windows cut at entities’ own modification times deliver each of them to the window that starts there', async () => {
    const s = await subject(name);
    const truth = await s.truth();
    const versions = [...truth.values()].sort();
    const boundaries = [versions[10]!, versions[20]!, versions[30]!];
    const partitioned = await runWindows(s, boundaries);
    const ids = partitioned.windows.flatMap((w) => w.entities.map(([id]) => id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(latest(...partitioned.windows)).toEqual(truth);
    partitioned.windows.slice(1).forEach((w, i) => {
      expect(w.entities[0]?.[1]).toBe(boundaries[i]);
    });
  });

  it('windows planned from a since deliver exactly the entities modified since then', async () => {
    const s = await subject(name);
    const truth = await s.truth();
    const since = [...truth.values()].sort()[20]!;
    const result = await plan(s, { maxWindows: 3, minEntitiesPerWindow: 5 }, since);
    expect(result.boundaries.length).toBeGreaterThan(0);
    for (const b of result.boundaries) expect(b > since).toBe(true);
    const partitioned = await runWindows(s, result.boundaries, { since });
    const ids = partitioned.windows.flatMap((w) => w.entities.map(([id]) => id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(latest(...partitioned.windows)).toEqual(new Map([...truth].filter(([, v]) => v >= since)));
  });

  it('collapses equal quantiles of a tie group wider than a window, and its windows still deliver each entity once', async () => {
    const s = await subject(name);
    // 30 entities edited in one bulk edit: one modification time holds two thirds of the listing.
    await s.tie(Array.from({ length: 30 }, (_, i) => i + 5));
    const result = await plan(s, { maxWindows: 4, minEntitiesPerWindow: 5 });
    expect(result.boundaries.length).toBeLessThan(3);
    expect(new Set(result.boundaries).size).toBe(result.boundaries.length);
    const partitioned = await runWindows(s, result.boundaries);
    const ids = partitioned.windows.flatMap((w) => w.entities.map(([id]) => id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(latest(...partitioned.windows)).toEqual(await s.truth());
  });

  it('windows read in turns while the source is edited lose nothing, and never share a version', async () => {
    const s = await subject(name);
    const result = await plan(s, { maxWindows: 4, minEntitiesPerWindow: 5 });
    const raced = await runWindows(s, result.boundaries, { edit: true });
    const owner = new Map<string, number>();
    raced.windows.forEach((w, index) => {
      for (const [id, version] of w.entities) {
        expect(owner.get(`${id}@${version}`) ?? index).toBe(index);
        owner.set(`${id}@${version}`, index);
      }
    });
    const quiet = await run(s, { since: raced.watermark });
    const truth = await s.truth();
    const stored = latest(...raced.windows, quiet);
    expect([...truth].filter(([id, version]) => stored.get(id) !== version)).toEqual([]);
    expect(raced.watermark).not.toBeNull();
  });

  it('a partition resumes from each of its checkpoints as if uninterrupted', async () => {
    const s = await subject(name);
    const result = await plan(s, { maxWindows: 3, minEntitiesPerWindow: 5 });
    const window = windowsOf(result.boundaries)[1]!;
    const whole = await run(s, { window });
    expect(whole.pages.length).toBeGreaterThan(1);
    for (let k = 1; k < whole.cursors.length; k++) {
      const resumed = await run(s, { window, from: whole.cursors[k] });
      expect(resumed.entities).toEqual(whole.entities.slice(whole.entities.length - resumed.entities.length));
      expect(resumed.cursors).toEqual(whole.cursors.slice(k));
    }
  });

  it('classifies a failed planning request as its other requests', async () => {
    const s = await subject(name);
    const answers = await s.throttledBy(() => plan(s, { maxWindows: 4, minEntitiesPerWindow: 5 }));
    for (const answer of answers) {
      const verdict = s.connector.classify(answer.error, Date.now());
      expect({ answer: answer.name, errorClass: verdict.errorClass }).toEqual({
        answer: answer.name,
        errorClass: 'transient',
      });
      expect(verdict.waitMs ?? 0).toBeGreaterThan(0);
    }
  });
});

describe('partition contract: a stream that cannot be split', () => {
  it.each([
    { why: 'without sinceParam', change: { sinceParam: undefined } },
    { why: 'unordered', change: { ordered: false } },
  ])('rest-json $why plans no windows, spends no request, and refuses a window', async ({ change }) => {
    const s = await subject('rest-json');
    const config = { ...(s.config as Record<string, unknown>), ...change };
    expect(
      await s.connector.planWindows!(config, { maxWindows: 4, minEntitiesPerWindow: 5 }, s.ctx(null)),
    ).toEqual({
      boundaries: [],
      total: null,
      requests: 0,
    });
    await expect(
      s.connector.fetchPage(config, null, s.ctx(null, { from: null, until: '2024-01-01T00:00:10.000Z' })),
    ).rejects.toThrow(ClassifiedError);
  });

  it('rest-json over a cursor without totalPath plans no windows and spends no request', async () => {
    const s = await subject('rest-json (keyed, cursor)');
    const config = { ...(s.config as Record<string, unknown>), totalPath: undefined };
    expect(
      await s.connector.planWindows!(config, { maxWindows: 4, minEntitiesPerWindow: 5 }, s.ctx(null)),
    ).toEqual({
      boundaries: [],
      total: null,
      requests: 0,
    });
  });
});

describe('partition contract: gitlab-issues above 10,000 issues', () => {
  it('counts the listing without X-Total by reads of one issue, and still cuts it evenly', async () => {
    const s = await subject('gitlab-issues', 12_000);
    const truth = await s.truth();
    const result = await plan(s, { maxWindows: 4, minEntitiesPerWindow: 100 });
    expect(result.total).toBe(12_000);
    expect(result.requests).toBeGreaterThan(4);
    expect(result.boundaries).toHaveLength(3);
    for (const size of windowSizes(truth, result.boundaries))
      expect(Math.abs(size - 3_000)).toBeLessThanOrEqual(1);
  });
});
