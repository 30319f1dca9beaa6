import { describe, expect, it } from 'vitest';
import type { ListedKey } from '../../lib/connectors/keyset.js';
import { compareIds, tieOrder } from '../../lib/connectors/tie-order.js';

const T1 = '2024-01-01T00:00:01.000Z';
const T2 = '2024-01-01T00:00:02.000Z';
const key = (id: string, at = T1): ListedKey => ({ ok: true, id, at });

describe('tie order', () => {
  it.each([
    ['9', '10', -1],
    ['100', '99', 1],
    ['e-000009', 'e-000010', -1],
    ['b', 'a', 1],
    ['7', '7', 0],
  ])('compares %s with %s as a source breaking ties by its key would (%i)', (a, b, sign) => {
    expect(Math.sign(compareIds(a, b))).toBe(sign);
  });

  it('trusts a group whose first page lists its members in ascending id order, and finds members served again', () => {
    const opening = tieOrder([key('8'), key('9'), key('10')], T1, undefined, true);
    expect(opening).toEqual({ again: [false, false, false], last: '10' });
    const later = tieOrder([key('9'), key('10'), key('11'), key('3', T2)], T1, opening.last, false);
    expect(later).toEqual({ again: [true, true, false, false], last: '11' });
  });

  it('skips nothing in a group whose first page is not in id order, or holds one member', () => {
    expect(tieOrder([key('b'), key('a')], T1, undefined, true).last).toBeUndefined();
    expect(tieOrder([key('a')], T1, undefined, true).last).toBeUndefined();
    expect(tieOrder([key('a'), key('b')], T1, undefined, false).again).toEqual([false, false]);
  });
});
