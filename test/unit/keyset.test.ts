import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  advance,
  decodePosition,
  encodePosition,
  type KeysetPosition,
  type ListedKey,
  listedKey,
} from '../../lib/connectors/keyset.js';
import { pageWatermark } from '../../lib/engine/run/watermark.js';
import { ClassifiedError } from '../../lib/retry/errors.js';

const T1 = '2024-01-01T00:00:01.000Z';
const T2 = '2024-01-01T00:00:02.000Z';
const T3 = '2024-01-01T00:00:03.000Z';
const key = (id: string, at: string): ListedKey => ({ ok: true, id, at });

describe('keyset positions', () => {
  it('round-trip through the cursor the engine checkpoints', () => {
    const position: KeysetPosition = { at: T1, ids: ['a', 'b'], follow: 'page-3', ceiling: T1, full: 20 };
    expect(decodePosition(encodePosition(position), null)).toEqual(position);
  });

  it('start at the run’s since, or at the very start without one', () => {
    expect(decodePosition(null, T2)).toEqual({ at: T2, ids: [] });
    expect(decodePosition(null, null)).toEqual({ at: null, ids: [] });
  });

  it('start a partition at the later of since and its window’s from, bounded by its until', () => {
    expect(decodePosition(null, T1, { from: T2, until: T3 })).toEqual({ at: T2, ids: [], until: T3 });
    expect(decodePosition(null, T3, { from: T2, until: null })).toEqual({ at: T3, ids: [] });
    expect(decodePosition(null, null, { from: null, until: T2 })).toEqual({ at: null, ids: [], until: T2 });
  });

  it('keep the window bound in the cursor, and refuse a cursor of another window', () => {
    const position: KeysetPosition = { at: T1, ids: ['a'], until: T3 };
    const cursor = encodePosition(position);
    expect(decodePosition(cursor, null)).toEqual(position);
    expect(decodePosition(cursor, null, { from: T1, until: T3 })).toEqual(position);
    expect(() => decodePosition(cursor, null, { from: T1, until: T2 })).toThrow(ClassifiedError);
    expect(() => decodePosition(encodePosition({ at: T1, ids: [] }), null, { from: T1, until: T3 })).toThrow(
      ClassifiedError,
    );
  });

  it('refuse a cursor that is not a keyset position rather than guess', () => {
    expect(() => decodePosition('https://api.github.com/issues?page=2', null)).toThrow(ClassifiedError);
    expect(() => decodePosition('ks1.bm90IGpzb24', null)).toThrow(ClassifiedError);
  });
});

describe('advance', () => {
  it('skips only the records already delivered at the key, and moves to the page’s last key', () => {
    const step = advance({ at: T1, ids: ['a'] }, [key('a', T1), key('b', T1), key('c', T2)], 'next');
    expect(step.deliver).toEqual([false, true, true]);
    expect(step.next).toEqual({ at: T2, ids: ['c'], full: 3 });
    expect(step.ceiling).toBeNull();
  });

  it('delivers an entity listed again with a newer time (edited mid-run)', () => {
    const step = advance({ at: T1, ids: ['a'] }, [key('a', T2)], 'next');
    expect(step.deliver).toEqual([true]);
  });

  it('ends when the source says the listing ended, and only then', () => {
    expect(advance({ at: T1, ids: [] }, [key('a', T2)], null).next).toBeNull();
    expect(advance({ at: T1, ids: [] }, [], null).next).toBeNull();
    // Two-sided: a page, however short, with the source's continuation goes on.
    expect(advance({ at: T1, ids: [], full: 3 }, [key('a', T2)], 'next').next).not.toBeNull();
  });

  it('goes on after a short page when the source says more follows (rows dropped after its limit)', () => {
    // A page of 2 after pages of 3: the source cut the page to its limit, then dropped a row the
    // caller may not see, and still hands out a next cursor.
    const step = advance({ at: T1, ids: ['a'], full: 3 }, [key('a', T1), key('b', T2)], 'cursor-2');
    expect(step.deliver).toEqual([false, true]);
    expect(step.next).toEqual({ at: T2, ids: ['b'], full: 3 });
  });

  it('follows the source’s continuation across an empty page, keeping its key', () => {
    const step = advance({ at: T1, ids: ['a'], full: 3 }, [], 'cursor-2');
    expect(step.next).toMatchObject({ at: T1, follow: 'cursor-2' });
    const after = advance(step.next!, [key('b', T2)], null);
    expect(after.deliver).toEqual([true]);
    // The stretch read by position is listed once more before the stream ends.
    expect(after.next).toMatchObject({ at: T1, ids: [], check: { end: null, resume: null } });
    const again = advance(after.next!, [], 'cursor-2');
    expect(advance(again.next!, [key('b', T2)], null)).toEqual({
      deliver: [false],
      next: null,
      ceiling: null,
    });
  });

  it('without a continuation of the source’s own, ends on an empty page, and on a short page only after re-listing from its last key once', () => {
    const guessed = { guessed: true };
    expect(advance({ at: T1, ids: [], full: 3 }, [], '2', guessed).next).toBeNull();
    const short = advance({ at: T1, ids: [], full: 3 }, [key('a', T2)], '2', guessed);
    expect(short.next).toEqual({ at: T2, ids: ['a'], full: 3, recheck: true });
    // The re-listing finds more: the short page was not the end, reading goes on.
    const more = advance(short.next!, [key('a', T2), key('b', T3), key('c', T3)], '2', guessed);
    expect(more.deliver).toEqual([false, true, true]);
    expect(more.next).toEqual({ at: T3, ids: ['b', 'c'], full: 3 });
    // The re-listing finds nothing new: the stream ended.
    expect(advance(short.next!, [key('a', T2)], '2', guessed).next).toBeNull();
    // A full page goes on without a re-listing.
    expect(advance({ at: T1, ids: [], full: 1 }, [key('a', T2)], '2', guessed).next).toEqual({
      at: T2,
      ids: ['a'],
      full: 1,
    });
  });

  it('inside a window, a page the source cut short twice goes on; only a page with nothing new ends it; the whole stream keeps the rule', () => {
    const guessed = { guessed: true };
    const T4 = '2024-01-01T00:00:04.000Z';
    // A window short of its until: the next window's records are still to be listed.
    const windowed = advance(
      { at: T1, ids: [], full: 3, until: T4, recheck: true },
      [key('a', T2)],
      '2',
      guessed,
    );
    expect(windowed.next).toEqual({ at: T2, ids: ['a'], full: 3, until: T4, recheck: true });
    expect(advance(windowed.next!, [key('a', T2)], '2', guessed).next).toBeNull();
    // The whole stream (or a run's open last window): a page cut short twice ends it.
    expect(
      advance({ at: T1, ids: [], full: 3, recheck: true }, [key('a', T2)], '2', guessed).next,
    ).toBeNull();
  });

  it('holds the watermark where a window stops on a guess short of its until, not where it is proved to end', () => {
    const guessed = { guessed: true };
    const T4 = '2024-01-01T00:00:04.000Z';
    const window: KeysetPosition = { at: T2, ids: ['a'], full: 3, until: T4 };
    // An empty page (a search that timed out on a shard), the connector guessing no next page.
    expect(advance(window, [], null, guessed)).toMatchObject({ next: null, ceiling: T2 });
    expect(advance(window, [], '2', guessed)).toMatchObject({ next: null, ceiling: T2 });
    // A lower ceiling met before stays.
    expect(advance({ ...window, ceiling: T1 }, [], null, guessed).ceiling).toBe(T1);
    // Proved: a record at or past until, or the source's own word that the listing ended.
    expect(advance(window, [key('b', T3), key('c', T4)], '2', guessed)).toMatchObject({
      next: null,
      ceiling: null,
    });
    expect(advance(window, [], null)).toMatchObject({ next: null, ceiling: null });
    // The whole stream, or the open last window: it ends on its guess, the watermark its latest key.
    expect(advance({ at: T2, ids: ['a'], full: 3 }, [], null, guessed)).toMatchObject({
      next: null,
      ceiling: null,
    });
  });

  it('follows the source’s continuation through a tie group larger than a page, then lists it again: read whole, the watermark moves on', () => {
    const step = advance({ at: T1, ids: ['a'] }, [key('a', T1), key('b', T1)], 'page-2');
    expect(step.deliver).toEqual([false, true]);
    expect(step.next).toMatchObject({ at: T1, follow: 'page-2' });
    expect(step.ceiling).toBeNull();
    // Out of the tie: the group is listed again from its key, delivering nothing.
    const after = advance(step.next!, [key('c', T1), key('d', T2)], 'page-3');
    expect(after.deliver).toEqual([true, true]);
    const resume = { at: T2, ids: ['d'], full: 2 };
    expect(after.next).toMatchObject({ at: T1, ids: [], check: { end: T2, resume } });
    const first = advance(after.next!, [key('a', T1), key('b', T1)], 'page-2');
    expect(first.deliver).toEqual([false, false]);
    expect(first.next).toMatchObject({ at: T1, follow: 'page-2', check: { end: T2 } });
    // The same group both times: back to keys, no ceiling.
    expect(advance(first.next!, [key('c', T1), key('d', T2)], 'page-3')).toEqual({
      deliver: [false, false],
      next: resume,
      ceiling: null,
    });
  });

  it('holds the watermark at a tie group read by position when its second listing differs (a member left meanwhile)', () => {
    const step = advance({ at: T1, ids: [] }, [key('a', T1), key('b', T1)], 'page-2');
    const after = advance(step.next!, [key('c', T1), key('d', T2)], 'page-3');
    // `a` was edited away meanwhile: the group the second listing serves is not the one read.
    const again = advance(after.next!, [key('b', T1), key('c', T1)], 'page-2');
    const done = advance(again.next!, [key('d', T2), key('a', T3)], 'page-3');
    expect(done.next).toEqual({ at: T2, ids: ['d'], full: 2, ceiling: T1 });
    expect(done.ceiling).toBe(T1);
    // Kept for the rest of the run.
    expect(advance(done.next!, [key('d', T2), key('e', T3)], 'next').ceiling).toBe(T1);
  });

  it('skips invalid records listed again after the last key (already dead-lettered)', () => {
    const first = advance({ at: null, ids: [] }, [key('a', T1), { ok: false, ref: 'x' }], 'next');
    expect(first.next).toEqual({ at: T1, ids: ['a', 'x'], full: 2 });
    const again = advance(first.next!, [key('a', T1), { ok: false, ref: 'x' }, key('b', T2)], 'next');
    expect(again.deliver).toEqual([false, false, true]);
  });

  it('skips a record without an id listed again after the last key, knowing it by its content', () => {
    const broken = (raw: unknown) =>
      listedKey({ ok: false, reason: 'field `id` is missing', ref: null }, raw);
    const first = advance({ at: null, ids: [] }, [key('a', T1), broken({ title: 'x' })], 'next');
    const again = advance(
      first.next!,
      [key('a', T1), broken({ title: 'x' }), broken({ title: 'y' }), key('b', T2)],
      'next',
    );
    // The same content is the same record; another content is another one.
    expect(again.deliver).toEqual([false, false, true, true]);
    expect(broken({ title: 'x' })).toEqual(broken({ title: 'x' }));
    expect(broken({ title: 'x' })).not.toEqual(broken({ title: 'y' }));
  });

  it('delivers only records modified before the window’s until, and ends at the first at or after it', () => {
    const step = advance(
      { at: T1, ids: ['a'], until: T3 },
      [key('a', T1), key('b', T2), key('c', T3), key('d', T3)],
      'next',
    );
    expect(step.deliver).toEqual([false, true, false, false]);
    expect(step.next).toBeNull();
    // Two-sided: a page wholly before the bound goes on, and the next position keeps the bound.
    const before = advance({ at: T1, ids: ['a'], until: T3 }, [key('a', T1), key('b', T2)], 'next');
    expect(before.deliver).toEqual([false, true]);
    expect(before.next).toEqual({ at: T2, ids: ['b'], full: 2, until: T3 });
  });

  it('excludes a tie group at the window’s until whole, even when it starts the page', () => {
    const step = advance({ at: T1, ids: ['a'], until: T2 }, [key('b', T2), key('c', T2)], 'page-2');
    expect(step.deliver).toEqual([false, false]);
    expect(step.next).toBeNull();
  });

  it('keeps the window bound while following a tie group by position, and while checking it', () => {
    const step = advance({ at: T1, ids: ['a'], until: T3 }, [key('a', T1), key('b', T1)], 'page-2');
    expect(step.next).toMatchObject({ at: T1, follow: 'page-2', until: T3 });
    const out = advance(step.next!, [key('c', T1), key('d', T3)], 'page-3');
    expect(out.deliver).toEqual([true, false]);
    expect(out.next).toMatchObject({ at: T1, until: T3, check: { end: T3, resume: null } });
    const again = advance(out.next!, [key('a', T1), key('b', T1)], 'page-2');
    expect(advance(again.next!, [key('c', T1), key('d', T3)], 'page-3').next).toBeNull();
  });

  it('delivers invalid records listed before the record that ends the window, not those after it', () => {
    const invalid = (ref: string): ListedKey => ({ ok: false, ref });
    const step = advance(
      { at: null, ids: [], until: T2 },
      [key('a', T1), invalid('x'), key('b', T2), invalid('y')],
      'next',
    );
    expect(step.deliver).toEqual([true, true, false, false]);
    expect(step.next).toBeNull();
  });

  it('refuses a listing that ignores the since filter (it would loop or skip silently)', () => {
    expect(() => advance({ at: T2, ids: [] }, [key('a', T1)], 'next')).toThrow(ClassifiedError);
  });
});

/** A static listing with invalid records: their true time orders them, but the run cannot read it. */
interface StaticRecord {
  readonly id: string;
  readonly t: number;
  readonly valid: boolean;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

function staticPage(records: readonly StaticRecord[], position: KeysetPosition, size: number) {
  const since = position.at === null ? null : Date.parse(position.at) / 1000;
  const list = records
    .filter((r) => since === null || r.t >= since)
    .sort((a, b) => a.t - b.t || (a.id < b.id ? -1 : 1));
  const number = position.follow === undefined ? 1 : Number(position.follow);
  const slice = list.slice((number - 1) * size, number * size);
  return {
    keys: slice.map((r): ListedKey => (r.valid ? key(r.id, iso(r.t)) : { ok: false, ref: r.id })),
    next: number * size < list.length ? String(number + 1) : null,
  };
}

/** Reads one window to its end; returns the ids (or refs) it delivered. */
function readWindow(
  records: readonly StaticRecord[],
  window: { from: string | null; until: string | null },
  size: number,
): string[] {
  const out: string[] = [];
  let position: KeysetPosition | null = decodePosition(null, null, window);
  for (let requests = 0; position !== null; requests++) {
    if (requests > 10_000) throw new Error('the window did not end');
    const page = staticPage(records, position, size);
    const step = advance(position, page.keys, page.next);
    page.keys.forEach((k, i) => {
      if (step.deliver[i]) out.push(k.ok ? k.id : k.ref!);
    });
    position = step.next;
  }
  return out;
}

/** Windows `[null, b1) [b1, b2) … [bn, null)` from ascending boundaries. */
function windowsOf(boundaries: readonly string[]): { from: string | null; until: string | null }[] {
  const edges = [null, ...boundaries, null];
  return edges.slice(0, -1).map((from, i) => ({ from, until: edges[i + 1] ?? null }));
}

describe('windows of a keyset listing', () => {
  it('partition a static stream: every valid entity is delivered by exactly one window, every invalid record by at least one', () => {
    fc.assert(
      fc.property(
        // (time, valid) per entity: few distinct times, so tie groups (also larger than a page) are common.
        fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 13 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 4 }),
        (entities, cuts, size, invalidEvery) => {
          const records = entities.map((t, i) => ({
            id: `e${String(i).padStart(3, '0')}`,
            t,
            valid: invalidEvery === 0 || i % (invalidEvery + 2) !== 0,
          }));
          const boundaries = [...new Set(cuts)].sort((a, b) => a - b).map(iso);
          const delivered = windowsOf(boundaries).flatMap((w) => readWindow(records, w, size));
          for (const r of records) {
            const times = delivered.filter((id) => id === r.id).length;
            if (r.valid) expect({ id: r.id, times }).toEqual({ id: r.id, times: 1 });
            else expect(times).toBeGreaterThanOrEqual(1);
          }
          expect(delivered.length).toBeGreaterThanOrEqual(records.length);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('do not deliver a tie group twice when records that do not normalize push it past the first page of its key', () => {
    const records = [
      { id: 'e0', t: 7, valid: false },
      { id: 'e1', t: 7, valid: true },
      { id: 'e2', t: 7, valid: true },
      { id: 'e3', t: 7, valid: false },
      { id: 'e4', t: 0, valid: true },
    ];
    const delivered = readWindow(records, { from: null, until: null }, 2).filter((id) => id !== 'e0');
    expect(delivered).toEqual(['e4', 'e1', 'e2', 'e3']);
  });

  it('deliver an entity at exactly a boundary to the window that starts there, not the one that ends there', () => {
    const records = [
      { id: 'a', t: 1, valid: true },
      { id: 'b', t: 2, valid: true },
      { id: 'c', t: 2, valid: true },
      { id: 'd', t: 3, valid: true },
    ];
    expect(readWindow(records, { from: null, until: iso(2) }, 1)).toEqual(['a']);
    expect(readWindow(records, { from: iso(2), until: null }, 1)).toEqual(['b', 'c', 'd']);
  });
});

/**
 * Reads a listing whose page size the source changes between requests (`sizes[n]` for request n,
 * the last size afterwards): page numbers then address other rows than before. `listing(n)`: the
 * records request n sees (the same ones by default).
 */
function readShifting(
  records: readonly StaticRecord[],
  sizes: readonly number[],
  listing: (request: number) => readonly StaticRecord[] = () => records,
) {
  const delivered: string[] = [];
  let ceiling: string | null = null;
  let position: KeysetPosition | null = decodePosition(null, null);
  for (let request = 0; position !== null; request++) {
    if (request > 200) throw new Error('the listing did not end');
    const page = staticPage(listing(request), position, sizes[Math.min(request, sizes.length - 1)]!);
    const step = advance(position, page.keys, page.next);
    page.keys.forEach((k, i) => {
      if (step.deliver[i]) delivered.push(k.ok ? k.id : k.ref!);
    });
    ceiling = step.ceiling;
    position = step.next;
  }
  return { delivered, ceiling };
}

describe('a tie group listed by page numbers whose page size changes mid-run', () => {
  // GitHub caps `per_page` silently, and search services lower their page size under load: page
  // 4 at one row a page is the fourth row, which page 1 at four rows a page already served.
  const tied = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id) => ({ id, t: 1, valid: true }));
  const records = [...tied, { id: 'z', t: 2, valid: true }];

  it('delivers each member once when the size shrinks, and moves the watermark past the group', () => {
    const { delivered, ceiling } = readShifting(records, [4, 4, 4, 1]);
    expect(delivered).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'z']);
    expect(ceiling).toBeNull();
  });

  it('holds the watermark at the group when the size grows and page numbers skip members', () => {
    const { delivered, ceiling } = readShifting(records, [2, 2, 2, 4]);
    expect(delivered).not.toContain('e');
    expect(ceiling).toBe(iso(1));
  });

  it('lists the start of the stream again when its first page was empty, and holds the watermark at the start when the page size grew meanwhile', () => {
    // Rows hidden after the limit empty the first page (Stripe, Slack); the source then serves
    // pages of four where it served two, and page 2 skips rows 3–4 of the listing.
    const hidden = new Set(['a', 'b']);
    const rows = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id, i) => ({ id, t: 10 + i, valid: true }));
    const delivered: string[] = [];
    let ceiling: string | null = null;
    let position: KeysetPosition | null = decodePosition(null, null);
    for (let request = 0; position !== null; request++) {
      if (request > 50) throw new Error('the listing did not end');
      const page = staticPage(rows, position, request === 0 ? 2 : 4);
      const keys = page.keys.filter((k) => !(k.ok && hidden.has(k.id)));
      const step = advance(position, keys, page.next);
      keys.forEach((k, i) => {
        if (step.deliver[i]) delivered.push(k.ok ? k.id : k.ref!);
      });
      ceiling = step.ceiling ?? ceiling;
      position = step.next;
    }
    expect(delivered).not.toContain('c');
    // The watermark cannot pass the start: the next run reads `c`.
    expect(ceiling).not.toBeNull();
    expect(ceiling! < iso(10)).toBe(true);
  });

  it('holds the watermark when a member joins the group behind the position (edited within its second)', () => {
    // `b2` is listed between `b` and `c` from request 4 on: the re-served `d` is skipped by order,
    // the second listing differs; `b2` is in id order, so the next run reads it.
    const joined = [...records, { id: 'b2', t: 1, valid: true }];
    const { delivered, ceiling } = readShifting(records, [2], (request) => (request < 3 ? records : joined));
    expect(delivered).not.toContain('b2');
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(ceiling).toBe(iso(1));
  });

  it('never skips a member for good when the source does not list ties in id order after its first page', () => {
    // The source's tie order: `a c b d e f` (stable, but not by id); `b` looks served again.
    const order = ['a', 'c', 'b', 'd', 'e', 'f'];
    const listing = [...order.map((id) => ({ id, t: 1 })), { id: 'z', t: 2 }];
    const delivered: string[] = [];
    let position: KeysetPosition | null = decodePosition(null, null);
    for (let request = 0; position !== null; request++) {
      if (request > 100) throw new Error('the listing did not end');
      const since = position.at === null ? -1 : Date.parse(position.at) / 1000;
      const list = listing.filter((r) => r.t >= since);
      const number = position.follow === undefined ? 1 : Number(position.follow);
      const slice = list.slice((number - 1) * 2, number * 2);
      const step = advance(
        position,
        slice.map((r) => key(r.id, iso(r.t))),
        number * 2 < list.length ? String(number + 1) : null,
      );
      slice.forEach((r, i) => {
        if (step.deliver[i]) delivered.push(r.id);
      });
      position = step.next;
    }
    expect(new Set(delivered)).toEqual(new Set([...order, 'z']));
    expect(delivered).toHaveLength(order.length + 1);
  });
});

/**
 * A model of a live source: entities with (updatedAt, id), a `since` listing sorted by both, paged
 * by position with a page number; edits move an entity to a new latest time (ties included).
 */
class LiveListing {
  clock = 0;
  readonly entities = new Map<string, number>();
  constructor(count: number) {
    for (let i = 0; i < count; i++) this.entities.set(`e${String(i).padStart(4, '0')}`, Math.floor(i / 3));
    this.clock = Math.floor(count / 3);
  }
  private sorted(since: number | null): [string, number][] {
    return [...this.entities]
      .filter(([, t]) => since === null || t >= since)
      .sort(([a, ta], [b, tb]) => ta - tb || (a < b ? -1 : 1));
  }
  page(at: string | null, follow: string | null, size: number): { keys: ListedKey[]; next: string | null } {
    const since = at === null ? null : Date.parse(at);
    const list = this.sorted(since === null ? null : since / 1000);
    const number = follow === null ? 1 : Number(follow);
    const slice = list.slice((number - 1) * size, number * size);
    return {
      keys: slice.map(([id, t]) => key(id, new Date(t * 1000).toISOString())),
      next: number * size < list.length ? String(number + 1) : null,
    };
  }
  edit(id: string, tied: boolean): void {
    if (!tied) this.clock += 1;
    this.entities.set(id, this.clock);
  }
}

describe('a keyset listing of a live source', () => {
  it('delivers every entity at its latest version, or leaves it at or after the watermark for the next run', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 15 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 40 }),
        (count, size, edits) => {
          const source = new LiveListing(count);
          const ids = [...source.entities.keys()];
          const delivered = new Map<string, Set<string>>();
          let position: KeysetPosition | null = { at: null, ids: [] };
          let latest: string | null = null;
          let ceiling: string | null = null;
          let requests = 0;
          while (position !== null) {
            const edit = edits[requests];
            if (edit) source.edit(ids[edit[0] % ids.length]!, edit[1]);
            requests += 1;
            if (requests > 10_000) throw new Error('the listing did not end');
            const page = source.page(position.at, position.follow ?? null, size);
            const step = advance(position, page.keys, page.next);
            for (const [i, k] of page.keys.entries()) {
              if (!step.deliver[i] || !k.ok) continue;
              delivered.set(k.id, (delivered.get(k.id) ?? new Set()).add(k.at));
              if (latest === null || k.at > latest) latest = k.at;
            }
            ceiling = step.ceiling;
            position = step.next;
          }
          const watermark = pageWatermark(null, latest === null ? [] : [latest], ceiling);
          for (const [id, t] of source.entities) {
            const at = new Date(t * 1000).toISOString();
            const stored = delivered.get(id)?.has(at) ?? false;
            // The next run asks since=watermark (inclusive): it lists every entity not stored yet.
            expect(stored || (watermark !== null && at >= watermark)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('windows of a keyset listing of a live source', () => {
  it('read concurrently, never deliver one version in two windows, and hold every entity at its latest version or at or after the watermark', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 15 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 7 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 40 }),
        (count, size, cuts, edits) => {
          const source = new LiveListing(count);
          const ids = [...source.entities.keys()];
          const boundaries = [...new Set(cuts)].sort((a, b) => a - b).map(iso);
          // The partitions advance in turns, one page each, with the source edited between requests.
          let active = windowsOf(boundaries).map((w, index) => ({
            index,
            position: decodePosition(null, null, w) as KeysetPosition | null,
            ceiling: null as string | null,
          }));
          const finished: { ceiling: string | null }[] = [];
          const delivered = new Map<string, Map<string, number>>();
          let latest: string | null = null;
          let requests = 0;
          while (active.length > 0) {
            for (const partition of active) {
              const { position, index } = partition as { position: KeysetPosition; index: number };
              const edit = edits[requests];
              if (edit) source.edit(ids[edit[0] % ids.length]!, edit[1]);
              requests += 1;
              if (requests > 20_000) throw new Error('the windows did not end');
              const page = source.page(position.at, position.follow ?? null, size);
              const step = advance(position, page.keys, page.next);
              for (const [i, k] of page.keys.entries()) {
                if (!step.deliver[i] || !k.ok) continue;
                const versions = delivered.get(k.id) ?? new Map<string, number>();
                // (A tie group that grows while it is paged may serve a version twice to one
                // window, harmlessly; two windows never share a version.)
                expect(versions.get(k.at) ?? index).toBe(index);
                delivered.set(k.id, versions.set(k.at, index));
                if (latest === null || k.at > latest) latest = k.at;
              }
              partition.ceiling = step.ceiling;
              partition.position = step.next;
            }
            finished.push(...active.filter((p) => p.position === null));
            active = active.filter((p) => p.position !== null);
          }
          const ceilings = finished.map((p) => p.ceiling).filter((c): c is string => c !== null);
          const ceiling = ceilings.length === 0 ? null : ceilings.sort()[0]!;
          const watermark = pageWatermark(null, latest === null ? [] : [latest], ceiling);
          for (const [id, t] of source.entities) {
            const at = new Date(t * 1000).toISOString();
            const stored = delivered.get(id)?.has(at) ?? false;
            expect(stored || (watermark !== null && at >= watermark)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
