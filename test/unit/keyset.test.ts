import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  advance,
  decodePosition,
  encodePosition,
  type KeysetPosition,
  type ListedKey,
} from '../../lib/connectors/keyset.js';
import { pageWatermark } from '../../lib/engine/watermark.js';
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

  it('ends when the source says the listing ended, when a page is empty, or shorter than a page it served before', () => {
    expect(advance({ at: T1, ids: [] }, [key('a', T2)], null).next).toBeNull();
    expect(advance({ at: T1, ids: [] }, [], 'next').next).toBeNull();
    expect(advance({ at: T1, ids: [], full: 3 }, [key('a', T2), key('b', T3)], 'next').next).toBeNull();
    // Two-sided: a page as long as the longest seen goes on.
    expect(advance({ at: T1, ids: [], full: 2 }, [key('a', T2), key('b', T3)], 'next').next).not.toBeNull();
  });

  it('follows the source’s continuation through a tie group larger than a page, with a watermark ceiling', () => {
    const step = advance({ at: T1, ids: ['a'] }, [key('a', T1), key('b', T1)], 'page-2');
    expect(step.deliver).toEqual([false, true]);
    expect(step.next).toMatchObject({ at: T1, follow: 'page-2', ceiling: T1 });
    expect(step.ceiling).toBe(T1);
    // Out of the tie: back to keys, the ceiling kept for the rest of the run.
    const after = advance(step.next!, [key('c', T1), key('d', T2)], 'page-3');
    expect(after.next).toEqual({ at: T2, ids: ['d'], ceiling: T1, full: 2 });
    expect(after.ceiling).toBe(T1);
  });

  it('skips invalid records listed again after the last key (already dead-lettered)', () => {
    const first = advance({ at: null, ids: [] }, [key('a', T1), { ok: false, ref: 'x' }], 'next');
    expect(first.next).toEqual({ at: T1, ids: ['a', 'x'], full: 2 });
    const again = advance(first.next!, [key('a', T1), { ok: false, ref: 'x' }, key('b', T2)], 'next');
    expect(again.deliver).toEqual([false, false, true]);
  });

  it('refuses a listing that ignores the since filter (it would loop or skip silently)', () => {
    expect(() => advance({ at: T2, ids: [] }, [key('a', T1)], 'next')).toThrow(ClassifiedError);
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
