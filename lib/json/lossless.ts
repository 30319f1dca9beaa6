import { randomBytes } from 'node:crypto';
// The document client's own class (lib-dynamodb re-exports it), taken from the small package that
// defines it: importing lib-dynamodb here would load the whole DynamoDB client into every CLI start.
import { NumberValueImpl as NumberValue } from '@aws-sdk/util-dynamodb';

/**
 * JSON without rounding. `JSON.parse` turns every number into a double: a 64-bit id such as a
 * Twitter/X or Discord snowflake (`1790000000000000001`) silently becomes another number, and two
 * ids that differ past the 16th digit become one. Here a number a double cannot carry exactly —
 * or that the DynamoDB client will not write as a plain number (beyond ±2^53) — is kept as the
 * source wrote it, in a {@link NumberValue}, which the DynamoDB document client stores exactly
 * (DynamoDB numbers hold 38 significant digits). Every other number stays a plain `number`.
 *
 * @example
 * parseJson('{"id": 18446744073709551617, "n": 3}'); // { id: NumberValue('18446744073709551617'), n: 3 }
 * stringifyJson({ id: new NumberValue('18446744073709551617') }); // '{"id":18446744073709551617}'
 */

export { NumberValue };

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** A number's decimal value in one spelling: sign, significant digits, exponent of the last digit. */
interface Decimal {
  readonly negative: boolean;
  /** No leading or trailing zeros; `''` for zero. */
  readonly digits: string;
  readonly exponent: number;
}

/** The decimal value of a JSON number's text (`1.50e2` → digits `15`, exponent 1). */
export function decimalOf(text: string): Decimal {
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const [mantissa = '', exp = '0'] = body.split(/[eE]/);
  const [whole = '', fraction = ''] = mantissa.split('.');
  let digits = (whole + fraction).replace(/^0+/, '');
  let exponent = Number(exp) - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return { negative: negative && digits !== '', digits, exponent: digits === '' ? 0 : exponent };
}

/**
 * True when `text` (a JSON number) survives as a plain JS number: the double has exactly its
 * decimal value as written, and lies within ±2^53, which the DynamoDB client requires of numbers.
 */
export function fitsNumber(text: string): boolean {
  // Up to 15 digits, no fraction or exponent: always a safe integer (2^53 has 16 digits).
  if (text.length <= 15 && /^-?\d+$/.test(text)) return true;
  const value = Number(text);
  if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return false;
  const written = decimalOf(text);
  const held = decimalOf(String(value));
  return written.digits === held.digits && written.exponent === held.exponent;
}

function isDigitOrSign(code: number): boolean {
  return code === 45 || (code >= 48 && code <= 57);
}

function isNumberChar(code: number): boolean {
  // digits, `+`, `-`, `.`, `e`, `E`
  return (
    (code >= 48 && code <= 57) || code === 43 || code === 45 || code === 46 || code === 101 || code === 69
  );
}

/** Index just past the string literal opening at `start` (or the text's end when unterminated). */
export function endOfString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    for (let i = quote - 1; text.charCodeAt(i) === 92; i--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Start and end of every number token outside string literals that a double would not carry. */
function inexactNumbers(text: string): [number, number][] {
  const found: [number, number][] = [];
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (code === 34) {
      i = endOfString(text, i);
    } else if (isDigitOrSign(code)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      if (!fitsNumber(text.slice(i, end))) found.push([i, end]);
      i = end;
    } else {
      i++;
    }
  }
  return found;
}

/** A marker no source can write: a control character (escaped in JSON) and a per-process secret. */
const MARKER = `\u0001${randomBytes(12).toString('hex')}:`;
const MARKER_ESCAPED = `\\u0001${MARKER.slice(1)}`;

/**
 * Parses JSON like `JSON.parse`, except that numbers a double would round (or that lie beyond
 * ±2^53) become {@link NumberValue}s holding the number's text as the source wrote it.
 *
 * @throws SyntaxError as `JSON.parse` does.
 */
export function parseJson(text: string): unknown {
  const inexact = inexactNumbers(text);
  if (inexact.length === 0) return JSON.parse(text);
  const parts: string[] = [];
  let at = 0;
  for (const [start, end] of inexact) {
    const token = text.slice(start, end);
    // Only well-formed numbers are rewritten; anything else is left for JSON.parse to refuse.
    if (!JSON_NUMBER.test(token)) continue;
    parts.push(text.slice(at, start), `"${MARKER_ESCAPED}${token}"`);
    at = end;
  }
  parts.push(text.slice(at));
  return JSON.parse(parts.join(''), (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(MARKER)
      ? new NumberValue(value.slice(MARKER.length))
      : value,
  );
}

const MARKED = new RegExp(`"${MARKER_ESCAPED.replaceAll('\\', '\\\\')}([^"]*)"`, 'g');

/**
 * `JSON.stringify`, writing each {@link NumberValue} as the bare number it holds (a value that is
 * not a JSON number is written as a string), so big numbers leave the system as they came in.
 */
export function stringifyJson(value: unknown, space?: number): string {
  let marked = false;
  const text = JSON.stringify(
    value,
    (_key, current: unknown) => {
      if (!(current instanceof NumberValue)) return current;
      if (!JSON_NUMBER.test(current.value)) return current.value;
      marked = true;
      return MARKER + current.value;
    },
    space,
  );
  return marked ? text.replace(MARKED, '$1') : text;
}

/**
 * The number a DynamoDB read hands back for a stored number's text: a plain `number` when it fits
 * one exactly, else a {@link NumberValue} (the document client's default would give a `BigInt`,
 * which `JSON.stringify` refuses, or throw for a big decimal). Pass as `wrapNumbers`.
 */
export function readStoredNumber(text: string): number | NumberValue {
  return fitsNumber(text) ? Number(text) : new NumberValue(text);
}
