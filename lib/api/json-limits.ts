import { isWellFormed } from '../json/unicode.js';
import type { FieldError } from './errors.js';

/**
 * Limits every request body is held to before any schema sees it, whatever the route or the
 * connector: text that is valid Unicode (a lone surrogate cannot be stored or signed and
 * answered 500 once, after schedules were already written), bounded strings, keys and nesting,
 * and no `__proto__` key anywhere (JSON.parse makes it an own property that object spreads and
 * some schemas would silently drop or, worse, treat as the prototype).
 */

/** Longest string value: a URL or a dot path fits with room; a 60 KB id field is a mistake. */
export const MAX_STRING_LENGTH = 2048;
/** Longest object key (config field names, query parameter and header names). */
export const MAX_KEY_LENGTH = 128;
/** Deepest nesting of objects and arrays. Source configs are a few levels deep. */
export const MAX_DEPTH = 8;

const FORBIDDEN_KEYS = new Set(['__proto__']);
const MAX_ERRORS = 20;

function describe(path: readonly (string | number)[]): string {
  return path.map(String).join('.');
}

/**
 * The fields of a parsed JSON body that break the limits above, by dot path; empty when none.
 *
 * @example
 * jsonLimitViolations(JSON.parse('{"a":"\\ud800"}')); // [{ path: 'a', message: 'is not valid Unicode …' }]
 */
export function jsonLimitViolations(value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (errors.length >= MAX_ERRORS) return;
    if (typeof node === 'string') {
      if (!isWellFormed(node))
        errors.push({ path: describe(path), message: 'is not valid Unicode (it holds a lone surrogate)' });
      else if (node.length > MAX_STRING_LENGTH)
        errors.push({ path: describe(path), message: `must be at most ${MAX_STRING_LENGTH} characters` });
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (path.length >= MAX_DEPTH) {
      errors.push({ path: describe(path), message: `nests deeper than ${MAX_DEPTH} levels` });
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        visit(item, [...path, index]);
      });
      return;
    }
    for (const key of Object.keys(node)) {
      const at = describe([...path, key]);
      if (FORBIDDEN_KEYS.has(key)) errors.push({ path: at, message: 'is not an allowed field name' });
      else if (!isWellFormed(key))
        errors.push({ path: at, message: 'has a field name that is not valid Unicode' });
      else if (key.length > MAX_KEY_LENGTH)
        errors.push({ path: at, message: `field names must be at most ${MAX_KEY_LENGTH} characters` });
      else visit((node as Record<string, unknown>)[key], [...path, key]);
    }
  };
  visit(value, []);
  return errors;
}
