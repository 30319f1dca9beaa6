/**
 * DynamoDB's per-item limits, measured on the wire shape of a request (`{ S: … }`, `{ M: … }`),
 * as DynamoDB's developer guide states them ("Service, account, and table quotas" and "Item
 * sizes and formats"). The strict layer (`dynamo-rules.ts`) applies them before a request leaves
 * this process, because the emulators the tests run on do not, or not all of them.
 */

/** One attribute value as it travels in a DynamoDB JSON request. */
export type WireValue = Readonly<Record<string, unknown>>;
/** An item or key in the wire shape: attribute name → value. */
export type WireItem = Readonly<Record<string, WireValue>>;

/** The largest item DynamoDB stores: 400 KB, attribute names included. */
export const MAX_ITEM_BYTES = 400 * 1024;
/** The largest partition key value (strings and binaries; numbers are always short enough). */
export const MAX_PARTITION_KEY_BYTES = 2048;
/** The largest sort key value. */
export const MAX_SORT_KEY_BYTES = 1024;
/** Levels of nested lists and maps DynamoDB stores, counting an item's attribute as level 1. */
export const MAX_NESTING_LEVELS = 32;

/**
 * The size DynamoDB counts for an item: for each attribute, the UTF-8 length of its name plus
 * the size of its value. Strings and binaries count their bytes; a number about one byte per two
 * significant digits plus one; `BOOL` and `NULL` one byte; lists and maps 3 bytes plus one per
 * element plus their elements (a map's keys count like attribute names).
 *
 * @example
 * itemBytes({ id: { S: 'a' }, n: { N: '12' } }); // 2 + 1 + 2 = 5
 */
export function itemBytes(item: WireItem): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += Buffer.byteLength(name) + valueBytes(value);
  return total;
}

/** The size DynamoDB counts for one attribute value (see {@link itemBytes}). */
export function valueBytes(value: WireValue): number {
  if (typeof value.S === 'string') return Buffer.byteLength(value.S);
  if (typeof value.N === 'string') return numberBytes(value.N);
  if (value.B !== undefined) return binaryBytes(value.B);
  if (Array.isArray(value.SS)) return sum(value.SS.map((s: string) => Buffer.byteLength(s)));
  if (Array.isArray(value.NS)) return sum(value.NS.map((n: string) => numberBytes(n)));
  if (Array.isArray(value.BS)) return sum(value.BS.map(binaryBytes));
  if (Array.isArray(value.L)) return 3 + sum((value.L as WireValue[]).map((v) => 1 + valueBytes(v)));
  if (value.M !== null && typeof value.M === 'object')
    return 3 + Object.keys(value.M).length + itemBytes(value.M as WireItem);
  return 1;
}

/** Significant digits, two to a byte, plus one: DynamoDB's number encoding. */
function numberBytes(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return digits.length === 0 ? 1 : 1 + Math.ceil(digits.length / 2);
}

function binaryBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.from(value, 'base64').length;
  if (value instanceof Uint8Array) return value.byteLength;
  return 0;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/**
 * Levels of lists and maps in a value, the value itself included: 0 for a scalar, 1 for a map of
 * scalars. An item's attribute is level 1, so an attribute deeper than
 * {@link MAX_NESTING_LEVELS} is refused. Stops counting past the limit.
 */
export function nestingLevels(value: WireValue, limit = MAX_NESTING_LEVELS + 1): number {
  if (limit <= 0) return 0;
  const children = Array.isArray(value.L)
    ? (value.L as WireValue[])
    : value.M !== null && typeof value.M === 'object'
      ? Object.values(value.M as WireItem)
      : undefined;
  if (children === undefined) return 0;
  let deepest = 0;
  for (const child of children) deepest = Math.max(deepest, nestingLevels(child, limit - 1));
  return 1 + deepest;
}

/** True when any attribute of `item` nests lists and maps deeper than DynamoDB stores. */
export function nestedTooDeep(item: WireItem): boolean {
  return Object.values(item).some((value) => nestingLevels(value) > MAX_NESTING_LEVELS);
}

/** The bytes a key attribute's value counts against the key limits (numbers are never too long). */
export function keyValueBytes(value: WireValue | undefined): number {
  if (value === undefined) return 0;
  if (typeof value.S === 'string') return Buffer.byteLength(value.S);
  if (value.B !== undefined) return binaryBytes(value.B);
  return 0;
}
