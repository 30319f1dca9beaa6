import { decimalOf, NumberValue } from '../json/lossless.js';
import { isWellFormed, wellFormed } from '../json/unicode.js';

/**
 * What DynamoDB cannot hold, checked before a write so that one such record is dead-lettered
 * alone, with a reason an administrator can act on, instead of failing its whole page. The
 * limits are DynamoDB's own (its developer guide, "Service, account, and table quotas"):
 *
 * - numbers: at most 38 significant digits, magnitude between 1E-130 and 9.99…E+125 (or zero);
 *   `NaN` and `±Infinity` are not numbers there at all;
 * - nesting: lists and maps up to 32 levels deep (the item's own attributes are level 1);
 * - attribute names (map keys): at least 1 character, at most 64 KB of UTF-8;
 * - strings and names: UTF-8, so a lone UTF-16 surrogate (which has no UTF-8 form) cannot be stored;
 * - a sort key (the entity id): at most 1 KB of UTF-8.
 *
 * The item size limit is checked separately (see `items.ts`), since it needs the whole item.
 */

/** Significant digits a DynamoDB number keeps. */
export const DYNAMO_MAX_DIGITS = 38;
/** Levels of nested lists and maps DynamoDB stores, counting the item's attributes as level 1. */
export const DYNAMO_MAX_DEPTH = 32;
/** Decimal exponents of the most and least significant digits a DynamoDB number may have. */
const MAX_EXPONENT = 125;
const MIN_EXPONENT = -130;
const MAX_NAME_BYTES = 65_535;
const MAX_SORT_KEY_BYTES = 1_024;
// C0 and C1 controls and DEL: an id is shown in logs, terminals and URLs, where these reorder or
// erase what is printed around them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `text` as a reason quotes it: clipped and JSON-escaped, so a lone surrogate shows as `\ud800`. */
function quoted(text: string): string {
  return JSON.stringify(clip(text));
}

function where(path: readonly string[]): string {
  if (path.length === 0) return 'the record';
  const shown = path.length > 6 ? [...path.slice(0, 3), '…', ...path.slice(-2)] : path;
  return `\`${shown.map(wellFormed).join('.')}\``;
}

function clip(text: string): string {
  return text.length > 48 ? `${text.slice(0, 45)}…` : text;
}

/** Why DynamoDB cannot store this number's text, or null when it can. */
function numberProblem(text: string, path: readonly string[]): string | null {
  const { digits, exponent } = decimalOf(text);
  if (digits === '') return null;
  if (digits.length > DYNAMO_MAX_DIGITS) {
    return `number ${clip(text)} at ${where(path)} has ${digits.length} significant digits; DynamoDB keeps ${DYNAMO_MAX_DIGITS} and would round it`;
  }
  // `exponent` is the power of ten of the last digit; the first digit's is that plus the length − 1.
  const leading = exponent + digits.length - 1;
  if (leading > MAX_EXPONENT || exponent < MIN_EXPONENT) {
    return `number ${clip(text)} at ${where(path)} is outside the range DynamoDB stores (1E-130 to 9.99E+125 in magnitude)`;
  }
  return null;
}

function scalarProblem(value: unknown, path: readonly string[]): string | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      return `number ${value} at ${where(path)} is not a finite number, which DynamoDB cannot store`;
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
      return `number ${value} at ${where(path)} is beyond 2^53 and was already rounded before it reached the store`;
    }
    return numberProblem(String(value), path);
  }
  if (value instanceof NumberValue) return numberProblem(value.value, path);
  if (typeof value === 'string' && !isWellFormed(value)) {
    return `string at ${where(path)} holds an unpaired UTF-16 surrogate, which has no UTF-8 form for DynamoDB to store`;
  }
  return null;
}

/**
 * Why DynamoDB cannot store `value` as the item attribute named `name` (a map or list attribute
 * is nesting level 1), or null when it can. Stops at the first problem and never descends past
 * the depth limit, so an absurdly deep body costs no more than a legal one.
 *
 * @example
 * unstorableReason('data', { score: new NumberValue('1e400') });
 * // 'number 1e400 at `score` is outside the range DynamoDB stores (1E-130 to 9.99E+125 in magnitude)'
 */
export function unstorableReason(value: unknown, path: readonly string[] = [], level = 1): string | null {
  if (typeof value !== 'object' || value === null || value instanceof NumberValue) {
    return scalarProblem(value, path);
  }
  if (level > DYNAMO_MAX_DEPTH) {
    return `value at ${where(path)} is nested more than ${DYNAMO_MAX_DEPTH} levels deep, the most DynamoDB stores`;
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (!Array.isArray(value)) {
      if (key === '') return `an empty field name at ${where(path)}; DynamoDB refuses empty attribute names`;
      if (Buffer.byteLength(key) > MAX_NAME_BYTES) {
        return `field name ${quoted(key)} at ${where(path)} is longer than DynamoDB's 64 KB attribute-name limit`;
      }
      if (!isWellFormed(key)) {
        return `field name ${quoted(key)} at ${where(path)} holds an unpaired UTF-16 surrogate, which has no UTF-8 form for DynamoDB to store`;
      }
    }
    const problem = unstorableReason(item, [...path, key], level + 1);
    if (problem) return problem;
  }
  return null;
}

/**
 * Why an entity id cannot be a stored item's key, or null when it can: it is DynamoDB's sort key
 * (UTF-8, at most 1 KB) and is shown in logs, URLs and the CLI, so control characters are refused.
 *
 * @example
 * unstorableIdReason('a\u0000b'); // 'id "a\\u0000b" holds a control character …'
 */
export function unstorableIdReason(id: string): string | null {
  if (id === '') return 'the id is empty';
  if (!isWellFormed(id)) {
    return `id ${quoted(id)} holds an unpaired UTF-16 surrogate, which has no UTF-8 form for DynamoDB to store`;
  }
  if (CONTROL.test(id)) return `id ${quoted(id)} holds a control character, which an id may not`;
  if (Buffer.byteLength(id) > MAX_SORT_KEY_BYTES) {
    return `id ${quoted(id)} is longer than DynamoDB's 1 KB sort-key limit`;
  }
  return null;
}
