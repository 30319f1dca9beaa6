import { describe, expect, it } from 'vitest';
import { AttributeValueError, fromAttributeValue, toAttributeValue } from '../../lib/aws/json-attributes.js';
import { NumberValue, parseJson } from '../../lib/json/lossless.js';

describe('toAttributeValue', () => {
  it('reads a map from its prototype, never from a `constructor` key', () => {
    expect(toAttributeValue({ constructor: { name: 'Set' } })).toEqual({
      M: { constructor: { M: { name: { S: 'Set' } } } },
    });
  });

  it('keeps a `__proto__` key as an own key of the map it writes', () => {
    const value = parseJson('{"__proto__":{"a":1}}');

    const map = toAttributeValue(value).M ?? {};

    expect(Object.keys(map)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
  });

  it.each([
    ['a class instance', new Date(0)],
    ['a non-finite number', Number.POSITIVE_INFINITY],
    ['an unsafe number', 2 ** 60],
    ['a function', () => 1],
  ])('refuses %s with an AttributeValueError', (_what, value) => {
    expect(() => toAttributeValue(value)).toThrow(AttributeValueError);
  });

  it('writes NumberValues exactly and leaves out undefined members when asked', () => {
    expect(
      toAttributeValue(
        { n: new NumberValue('18446744073709551617'), u: undefined },
        { removeUndefinedValues: true },
      ),
    ).toEqual({ M: { n: { N: '18446744073709551617' } } });
  });
});

describe('fromAttributeValue', () => {
  it('reads a `__proto__` key back as an own key, leaving the prototype alone', () => {
    const raw: Record<string, { S: string }> = {};
    Object.defineProperty(raw, '__proto__', { value: { S: 'p' }, enumerable: true });

    const value = fromAttributeValue({ M: raw }) as Record<string, unknown>;

    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toBe('p');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('hands numbers to wrapNumbers', () => {
    expect(fromAttributeValue({ L: [{ N: '1' }] }, { wrapNumbers: (text) => `#${text}` })).toEqual(['#1']);
  });
});
