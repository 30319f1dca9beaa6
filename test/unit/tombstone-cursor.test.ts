import { describe, expect, it } from 'vitest';
import {
  isTombstoneSlice,
  listedPagesOf,
  sliceStart,
  tombstoneSlice,
} from '../../lib/engine/work/tombstone-cursor.js';
import { compareIds, partsOf, SEEN_PART_BYTES, sortedIds } from '../../lib/store/seen-pages.js';

describe('a tombstone slice cursor', () => {
  it('carries the key it starts after and the listing’s page count, whatever the key holds', () => {
    for (const after of [null, 'e-1', 'a|b', '18446744073709551615', 'é/ü?x=1']) {
      const cursor = tombstoneSlice(after, 42);
      expect(isTombstoneSlice(cursor)).toBe(true);
      expect(sliceStart(cursor)).toBe(after);
      expect(listedPagesOf(cursor)).toBe(42);
    }
  });

  it('reads a cursor without a page count (an older version’s) as one with marks only', () => {
    expect(sliceStart('tombstones:e-7')).toBe('e-7');
    expect(listedPagesOf('tombstones:e-7')).toBeNull();
    expect(listedPagesOf('tombstones:')).toBeNull();
  });
});

describe('seen ids', () => {
  it('sort as DynamoDB orders keys (UTF-8 bytes), not as JavaScript compares UTF-16', () => {
    // JavaScript's `<` puts 😀 (surrogate 0xD83D first) before ～ (0xFF5E); in UTF-8, as DynamoDB
    // compares keys, ～ (EF BD 9E) comes first.
    expect(sortedIds(['😀', '～', 'a', 'a'])).toEqual(['a', '～', '😀']);
    expect(compareIds('9', '10')).toBeGreaterThan(0);
    const units = [
      'a',
      'z',
      '\u00e9',
      '\u07ff',
      '\u0800',
      '\ud7ff',
      '\ue000',
      '\uffff',
      '\u{10000}',
      '\u{1f600}',
    ];
    let seed = 7;
    const pick = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return units[seed % units.length]!;
    };
    for (let i = 0; i < 2_000; i++) {
      const a = Array.from({ length: 1 + (i % 4) }, pick).join('');
      const b = Array.from({ length: 1 + ((i + 1) % 4) }, pick).join('');
      const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
      expect(Math.sign(compareIds(a, b))).toBe(bytes);
    }
  });

  it('are cut into parts that each stay under the part size', () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => `${'x'.repeat(1_000)}${i}`);
    const parts = partsOf(ids);
    expect(parts.flat()).toEqual(ids);
    for (const part of parts) expect(JSON.stringify(part).length).toBeLessThanOrEqual(SEEN_PART_BYTES + 2);
    expect(parts.length).toBeGreaterThan(1);
  });
});
