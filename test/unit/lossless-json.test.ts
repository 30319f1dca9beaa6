import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonResponse } from '../../lib/api/response.js';
import {
  fitsNumber,
  NumberValue,
  parseJson,
  readStoredNumber,
  stringifyJson,
} from '../../lib/json/lossless.js';
import { unstorableReason } from '../../lib/store/storable.js';

describe('parseJson', () => {
  it('keeps a 64-bit integer as the digits the source wrote', () => {
    const parsed = parseJson('{"id": 18446744073709551617, "n": 3}') as Record<string, unknown>;

    expect(parsed.id).toBeInstanceOf(NumberValue);
    expect(String(parsed.id)).toBe('18446744073709551617');
    expect(parsed.n).toBe(3);
  });

  it('tells apart two snowflake ids that a double would merge', () => {
    const [a, b] = parseJson('[1790000000000000001, 1790000000000000002]') as NumberValue[];

    expect(String(a)).not.toBe(String(b));
  });

  it('leaves numbers inside strings, and strings that look like numbers, alone', () => {
    expect(parseJson('{"a":"12345678901234567890","b\\"":"x\\\\","c":1.5}')).toEqual({
      a: '12345678901234567890',
      'b"': 'x\\',
      c: 1.5,
    });
  });

  it.each([
    ['1e400', true],
    ['0.1000000000000000055511151231257827', true],
    ['9007199254740993', true],
    ['-9007199254740993', true],
    ['1e-400', true],
    ['9007199254740991', false],
    ['0.1', false],
    ['-12.50', false],
    ['1e21', true],
  ])('keeps %s exactly: %s', (text, exact) => {
    expect(parseJson(text) instanceof NumberValue).toBe(exact);
    expect(String(parseJson(text))).toBe(exact ? text : String(Number(text)));
  });

  it('refuses what JSON.parse refuses', () => {
    expect(() => parseJson('{"a": 123456789012345678901')).toThrow(SyntaxError);
  });

  it('reads any JSON as JSON.parse does, numbers a double would round kept as written', () => {
    const asDoubles = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v instanceof NumberValue ? Number(v.value) : v)));
    fc.assert(
      fc.property(fc.json(), (text) => {
        const parsed = parseJson(text);
        expect(asDoubles(parsed)).toEqual(JSON.parse(text));
        expect(JSON.parse(stringifyJson(parsed))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('round-trips any integer through stringifyJson', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (n) => {
        expect(stringifyJson(parseJson(`{"v":${n}}`))).toBe(`{"v":${n}}`);
      }),
    );
  });
});

describe('stringifyJson', () => {
  it('writes a NumberValue as a bare number, and what is not a number as a string', () => {
    expect(stringifyJson({ a: new NumberValue('1e400'), b: new NumberValue('abc'), c: [1] })).toBe(
      '{"a":1e400,"b":"abc","c":[1]}',
    );
  });

  it('is what the API answers with, so a stored big number leaves exactly', () => {
    const response = jsonResponse(
      { status: 200, body: { id: readStoredNumber('18446744073709551617') } },
      'r',
    );

    expect(response.body).toBe('{"id":18446744073709551617}');
  });
});

describe('numbers read from the store', () => {
  it.each([
    ['42', 42],
    ['1.5', 1.5],
    ['18446744073709551617', new NumberValue('18446744073709551617')],
  ])('%s reads back as %s', (text, expected) => {
    expect(readStoredNumber(text)).toEqual(expected);
  });

  it('fitsNumber agrees with a double round trip for every safe integer', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(fitsNumber(String(n))).toBe(true);
      }),
    );
  });
});

describe('unstorableReason', () => {
  const deep = (levels: number) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = { r: value };
    return value as Record<string, unknown>;
  };

  it.each([
    [{ n: new NumberValue('18446744073709551617') }, null],
    [{ n: new NumberValue('1e400') }, /number 1e400 at `n` is outside the range/],
    [{ n: new NumberValue('1e-131') }, /outside the range/],
    [{ n: new NumberValue('1e125') }, null],
    [{ n: new NumberValue(`1${'0'.repeat(38)}1`) }, /40 significant digits/],
    [{ n: Number.POSITIVE_INFINITY }, /Infinity at `n` is not a finite number/],
    [{ n: Number.NaN }, /NaN at `n`/],
    [{ a: [{ '': 1 }] }, /empty field name at `a.0`/],
    [{ s: 'a\ud800b' }, /unpaired UTF-16 surrogate/],
    [deep(32), null],
    [deep(33), /nested more than 32 levels deep/],
  ])('%o → %s', (data, expected) => {
    const reason = unstorableReason(data);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toMatch(expected);
  });

  it('answers for a body nested 100,000 levels without overflowing the stack', () => {
    const body = parseJson(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);

    expect(unstorableReason({ body })).toMatch(/nested more than 32 levels/);
  });
});
