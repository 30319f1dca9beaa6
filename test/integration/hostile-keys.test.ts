import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { parseJson, stringifyJson } from '../../lib/json/lossless.js';
import { ItemStore } from '../../lib/store/items.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

/*
 * Field names are data: a key that names a property of every JavaScript object (`constructor`,
 * `__proto__`, `toString` …) is stored and read back as a plain map key, at any depth, like any
 * other. The document client's own marshalling treats `{ constructor: 'x' }` as a class instance
 * and lets `__proto__` become the map's prototype, so both used to fail or lose the field.
 */

let aws: TestAws;
let items: ItemStore;

beforeAll(async () => {
  aws = await setUpTestAws('hostile');
  items = new ItemStore(aws.clients.doc, aws.names.itemsTable);
});
afterAll(() => destroyAwsClients(aws.clients));

const HOSTILE = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'name'];

/** An object with exactly these own keys, `__proto__` included as a key, never as the prototype. */
function objectOf(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return object;
}

const key = fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ minLength: 1, maxLength: 8 }));
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1.5, 'Ferrari', 'Set', ''),
    fc.array(tie('json'), { maxLength: 3 }),
    fc
      .uniqueArray(fc.tuple(key, tie('json')), { selector: ([k]) => k, maxLength: 4 })
      .map((entries) => objectOf(entries)),
  ),
}));

describe('records whose field names are names of JavaScript properties', () => {
  it('are stored exactly and read back exactly, at any depth', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(key, json), { selector: ([k]) => k, minLength: 1, maxLength: 4 }),
        async (entries) => {
          const data = objectOf(entries);
          const id = `e${n++}`;
          const result = await items.load('hostile', { id, version: 'v1', data }, 'run-1', 1, 1);
          expect(result).toEqual({ entityId: id, status: 'written', changed: true });
          const stored = await items.get('hostile', id);
          expect(stringifyJson(stored?.data)).toBe(stringifyJson(data));
          expect(Object.keys(stored?.data ?? {})).toEqual(Object.keys(data));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a body with `__proto__` and `constructor` keys parses to those keys and is stored as sent', async () => {
    const body =
      '{"car":{"constructor":"Ferrari","__proto__":{"x":1}},"toString":"t","hasOwnProperty":{"name":"Set"}}';
    const data = parseJson(body) as Record<string, unknown>;

    expect(await items.load('body', { id: 'car', version: 'v1', data }, 'run-1', 1, 1)).toMatchObject({
      status: 'written',
    });
    const stored = await items.get('body', 'car');
    expect(stringifyJson(stored?.data)).toBe(body);
    const car = (stored?.data as { car?: object } | undefined)?.car ?? null;
    expect(Object.getPrototypeOf(car)).toBe(Object.prototype);
  });
});
