/**
 * DynamoDB's item size, as it bills reads and writes: the UTF-8 bytes of every attribute name
 * plus the size of its value, by type. Strings count their UTF-8 bytes; numbers about one byte per
 * two significant digits plus one; binary its bytes; null and booleans 1 byte; lists and maps 3
 * bytes plus 1 byte per element plus the elements (a map's keys count like attribute names).
 *
 * Values come in the two shapes the benchmark's counter sees: plain JavaScript (the document
 * client's input and output) or marshalled AttributeValues (`{ S: '…' }`, the base client's, and
 * the `Item` of a refused conditional write).
 */

const TYPE_KEYS = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'M', 'L', 'SS', 'NS', 'BS']);

/** The size of an item, bytes. */
export function itemBytes(item: Record<string, unknown>, marshalled = false): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    bytes += utf8(name) + (marshalled ? marshalledBytes(value) : plainBytes(value));
  }
  return bytes;
}

/** Whether an item is marshalled: every attribute is a one-key AttributeValue object. */
export function looksMarshalled(item: Record<string, unknown>): boolean {
  const values = Object.values(item);
  return (
    values.length > 0 &&
    values.every((v) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
      const keys = Object.keys(v);
      return keys.length === 1 && TYPE_KEYS.has(keys[0] ?? '');
    })
  );
}

/** Bytes of a number's text: ~1 byte per 2 significant digits, plus 1. */
export function numberBytes(text: string): number {
  const digits = text
    .replace(/^-/, '')
    .replace(/e.*$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

function utf8(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function plainBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberBytes(String(value));
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((sum: number, v) => sum + plainBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + plainBytes(v), 0);
  if (typeof value === 'object') {
    // lib-dynamodb's NumberValue (an exactly stored number): `{ value: '…' }` with a class.
    const numberValue = (value as { value?: unknown }).value;
    if (value.constructor?.name === 'NumberValue' && typeof numberValue === 'string')
      return numberBytes(numberValue);
    let bytes = 3;
    for (const [key, v] of Object.entries(value)) if (v !== undefined) bytes += 1 + utf8(key) + plainBytes(v);
    return bytes;
  }
  return utf8(String(value));
}

function marshalledBytes(value: unknown): number {
  const av = value as Record<string, unknown>;
  if ('S' in av) return utf8(String(av.S));
  if ('N' in av) return numberBytes(String(av.N));
  if ('B' in av) return (av.B as Uint8Array | string).length;
  if ('BOOL' in av || 'NULL' in av) return 1;
  if ('SS' in av) return (av.SS as string[]).reduce((sum, s) => sum + utf8(s), 0);
  if ('NS' in av) return (av.NS as string[]).reduce((sum, s) => sum + numberBytes(s), 0);
  if ('BS' in av) return (av.BS as Uint8Array[]).reduce((sum, b) => sum + b.length, 0);
  if ('L' in av) return 3 + (av.L as unknown[]).reduce((sum: number, v) => sum + 1 + marshalledBytes(v), 0);
  if ('M' in av) {
    let bytes = 3;
    for (const [key, v] of Object.entries(av.M as Record<string, unknown>))
      bytes += 1 + utf8(key) + marshalledBytes(v);
    return bytes;
  }
  return 0;
}
