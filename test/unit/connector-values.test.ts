import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getPath, toIsoTimestamp } from '../../lib/connectors/values.js';

describe('getPath', () => {
  const doc = { data: { items: [{ id: 1 }, { id: 2 }] } };

  it.each([
    ['', doc],
    ['data.items.1.id', 2],
    ['data.missing', undefined],
    ['data.items.x', undefined],
    ['constructor', undefined],
  ])('reads %j', (path, value) => {
    expect(getPath(doc, path)).toEqual(value);
  });
});

describe('toIsoTimestamp', () => {
  it.each([
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00.5-01:00', '2024-05-01T11:00:00.500Z'],
    ['2024-05-01 10:00:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['Wed, 01 May 2024 10:00:00 GMT', '2024-05-01T10:00:00.000Z'],
    ['1714557600', '2024-05-01T10:00:00.000Z'],
    [1714557600, '2024-05-01T10:00:00.000Z'],
    [1714557600000, '2024-05-01T10:00:00.000Z'],
  ])('reads %j as %s', (value, iso) => {
    expect(toIsoTimestamp(value)).toBe(iso);
  });

  it.each([['yesterday'], ['foo 1'], [''], [Number.NaN], [1e20], [null], [true], ['2024-13-45T99:00:00Z']])(
    'refuses %j',
    (value) => {
      expect(toIsoTimestamp(value)).toBeUndefined();
    },
  );

  it('orders versions as strings exactly as it orders times', () => {
    const ms = fc.integer({ min: 0, max: 253_402_300_799_999 });
    fc.assert(
      fc.property(ms, ms, (a, b) => {
        const [x, y] = [toIsoTimestamp(new Date(a).toISOString()), toIsoTimestamp(new Date(b).toISOString())];
        expect(Math.sign((x as string).localeCompare(y as string, 'en'))).toBe(Math.sign(a - b));
        expect(x! < y!).toBe(a < b);
      }),
    );
  });
});
