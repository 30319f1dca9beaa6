import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  advance,
  decodePosition,
  encodePosition,
  type KeysetPosition,
  type ListedKey,
} from '../../lib/connectors/keyset.js';
import {
  carriedPosition,
  INLINE_POSITION_CHARS,
  MAX_STORED_POSITION_BYTES,
  PositionTooLargeError,
  resolvedPosition,
} from '../../lib/engine/chain/positions.js';
import type { EngineDeps } from '../../lib/engine/index.js';
import { ClassifiedError } from '../../lib/retry/errors.js';
import { compactId } from '../../lib/run/compact-ids.js';
import { type PositionRef, storedBytes } from '../../lib/store/positions.js';

const TIE = '2024-05-01T10:00:00.000Z';

/** A `since` listing of `rows` paged by page number, as GitHub's or any offset API's. */
function listing(rows: readonly { id: string; at: string }[], size: number) {
  return (position: KeysetPosition): { keys: ListedKey[]; next: string | null } => {
    const since = position.at === null ? rows : rows.filter((r) => r.at >= position.at!);
    const page = Number(position.follow ?? '1');
    const slice = since.slice((page - 1) * size, page * size);
    return {
      keys: slice.map((r) => ({ ok: true, id: r.id, at: r.at })),
      next: page * size < since.length ? String(page + 1) : null,
    };
  };
}

describe('a keyset position inside a tie group', () => {
  it('stays the same size whatever the tie group holds: 20,000 UUID rows at one time, pages of 100', () => {
    const rows = [
      { id: 'first', at: '2024-05-01T09:00:00.000Z' },
      ...Array.from({ length: 20_000 }, () => ({ id: randomUUID(), at: TIE })).sort((a, b) =>
        a.id < b.id ? -1 : 1,
      ),
    ];
    const page = listing(rows, 100);
    const delivered: string[] = [];
    let longest = 0;
    let position: KeysetPosition | null = decodePosition(null, null);
    for (let requests = 0; position !== null; requests++) {
      if (requests > 1_000) throw new Error('the tie group did not end');
      const { keys, next } = page(position);
      const step = advance(position, keys, next);
      for (const [i, k] of keys.entries()) if (step.deliver[i] && k.ok) delivered.push(k.id);
      position = step.next === null ? null : decodePosition(encodePosition(step.next), null);
      if (step.next) longest = Math.max(longest, encodePosition(step.next).length);
    }

    expect(delivered).toHaveLength(rows.length);
    expect(new Set(delivered).size).toBe(rows.length);
    // Two pages of ids at most, 13 characters each: about 4 KB, for any id length.
    expect(longest).toBeLessThan(5_000);
  });

  it('keeps long ids as digests and short ones as they are', () => {
    const uuid = randomUUID();
    expect(compactId('e-000001')).toBe('e-000001');
    expect(compactId(uuid)).toMatch(/^~[A-Za-z0-9_-]{12}$/);
    expect(compactId(compactId(uuid))).toBe(compactId(uuid));
    const position = decodePosition(encodePosition({ at: TIE, ids: [uuid, 'e-1'] }), null);
    expect(position.ids).toEqual([compactId(uuid), 'e-1']);
    // A digest still answers "already read?" for the id it stands for, and only for it.
    const step = advance(
      position,
      [
        { ok: true, id: uuid, at: TIE },
        { ok: true, id: randomUUID(), at: TIE },
        { ok: true, id: 'e-1', at: TIE },
      ],
      'next',
    );
    expect(step.deliver).toEqual([false, true, false]);
  });

  it('keeps a short id that is not well-formed Unicode as a digest of its code units, so it can be stored', () => {
    const [high, low] = [compactId('e-1\ud800'), compactId('e-1\ud801')];
    expect(high).toMatch(/^~[A-Za-z0-9_-]{12}$/);
    // UTF-8 would make both halves U+FFFD and give the two ids one digest.
    expect(low).not.toBe(high);
    expect(compactId(high)).toBe(high);
    // A well-formed pair is one character: the id stays as it is.
    expect(compactId('e-\ud83d\ude00')).toBe('e-\ud83d\ude00');
  });

  it('fits the stored ceiling with two pages of 10,000 UUIDs (the largest rest-json page size)', () => {
    const uuids = (n: number) => Array.from({ length: n }, () => randomUUID());
    const cursor = encodePosition({
      at: TIE,
      ids: uuids(10_000),
      before: uuids(9_999),
      follow: '7',
      full: 10_000,
    });
    expect(storedBytes(cursor).length).toBeLessThan(MAX_STORED_POSITION_BYTES);
  });
});

/** Engine dependencies with an in-memory position table: what carriedPosition and resolvedPosition use. */
function depsWithPositions(): EngineDeps {
  const table = new Map<string, Buffer>();
  const key = (ref: PositionRef) => `${ref.runId}#${ref.chain}#${ref.page}#${ref.digest}`;
  return {
    clock: { now: () => 0 },
    positions: {
      put: async (ref: PositionRef, stored: Buffer) => void table.set(key(ref), stored),
      get: async (ref: PositionRef) => {
        const stored = table.get(key(ref));
        return stored ? (await import('node:zlib')).gunzipSync(stored).toString('utf8') : undefined;
      },
    },
  } as unknown as EngineDeps;
}

describe('a position on its way to the next page', () => {
  it('travels inline while small', async () => {
    const deps = depsWithPositions();
    const small = 'x'.repeat(INLINE_POSITION_CHARS);
    expect(await carriedPosition(deps, 'run1', undefined, 2, small)).toBe(small);
    expect(await carriedPosition(deps, 'run1', undefined, 2, null)).toBeNull();
  });

  it('travels by a short reference when large, and reads back whole', async () => {
    const deps = depsWithPositions();
    const large = encodePosition({
      at: TIE,
      ids: Array.from({ length: 200 }, () => randomUUID()),
      follow: '3',
    });
    const carried = await carriedPosition(deps, 'run1', 4, 7, large);
    expect(carried).toMatch(/^pos1:run1:p4:7:/);
    expect(carried!.length).toBeLessThan(80);
    expect(await resolvedPosition(deps, carried)).toBe(large);
  });

  it('stores a small cursor that looks like a reference, so references are never ambiguous', async () => {
    const deps = depsWithPositions();
    const carried = await carriedPosition(deps, 'run1', undefined, 2, 'pos1:a source token');
    expect(carried).not.toBe('pos1:a source token');
    expect(await resolvedPosition(deps, carried)).toBe('pos1:a source token');
  });

  it('refuses a position beyond the ceiling, saying how large it is', async () => {
    const deps = depsWithPositions();
    // Random bytes do not compress: 500 KB of them, base64, stay about 500 KB gzipped.
    const random = randomBytes(500_000).toString('base64');
    const refused = await carriedPosition(deps, 'run1', undefined, 2, random).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(PositionTooLargeError);
    expect((refused as Error).message).toMatch(
      /takes \d+ KB compressed .* more than the 300 KB a run can keep/,
    );
  });

  it('fails the page for good when a stored position is gone', async () => {
    const deps = depsWithPositions();
    await expect(resolvedPosition(deps, 'pos1:run1:run:2:AAAAAAAAAAAAAAAAAAAAAA')).rejects.toThrow(
      ClassifiedError,
    );
  });
});
