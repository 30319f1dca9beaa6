import { json, type Reply } from '../reply.js';
import type { HostileKind } from './schema.js';

/**
 * Record fields that JSON parsers mishandle. JSON itself allows them: numbers of any size and
 * precision, nesting of any depth. A parser built on doubles rounds an integer above 2^53 silently
 * (Twitter's and Discord's 64-bit ids are why their APIs add `id_str`), reads `1e400` as Infinity,
 * and a store may refuse deep nesting (DynamoDB holds 32 levels).
 */

/** A hostile field: its name, the JSON text of its value, and, for integers, the exact digits. */
export interface HostileValue {
  readonly kind: HostileKind;
  /** The field's name; for `surrogate-id`, the suffix the record's id gets instead. */
  readonly field: string;
  /** The value as JSON text, written into the body verbatim. */
  readonly json: string;
  /** The exact decimal digits of a `big-integer`; '' for the other kinds. */
  readonly digits: string;
}

/** Nesting depth of a `deep` field: past DynamoDB's 32 levels. */
export const DEEP_NESTING = 40;

/**
 * A `property-names` field: every key names a property each JavaScript object has, at three
 * depths, and some spell what a marshaller looks for in `constructor.name`.
 */
export const PROPERTY_NAMES_JSON =
  '{"constructor":"Ferrari","__proto__":{"toString":"t","hasOwnProperty":{"name":"Set"}},"prototype":[{"valueOf":0,"constructor":{"name":"String"}}]}';

/**
 * The hostile field of entity `number`. Integers are odd, so no double holds them exactly: half
 * just above 2^53, half above 2^63 (an unsigned 64-bit id).
 */
export function hostileFor(kind: HostileKind, seed: number, number: number): HostileValue {
  switch (kind) {
    case 'big-integer': {
      const base = number % 2 === 0 ? 2n ** 53n : 2n ** 63n;
      const digits = (base + 1n + 2n * BigInt(((seed >>> 0) % 1_000) + number)).toString();
      return { kind, field: 'big', json: digits, digits };
    }
    case 'overflow':
      return { kind, field: 'huge', json: '1e400', digits: '' };
    case 'deep':
      return {
        kind,
        field: 'nested',
        json: `${'{"a":'.repeat(DEEP_NESTING)}1${'}'.repeat(DEEP_NESTING)}`,
        digits: '',
      };
    case 'property-names':
      return { kind, field: 'car', json: PROPERTY_NAMES_JSON, digits: '' };
    case 'surrogate-name':
      return { kind, field: 'bad\ud800name', json: '1', digits: '' };
    case 'surrogate-id':
      return { kind, field: '\ud800', json: 'true', digits: '' };
  }
}

/**
 * Serializes `body` with the given fields' JSON text spliced in verbatim: `JSON.stringify` can only
 * write numbers a double holds. `raw` maps a placeholder string, used as a value in `body`, to
 * the text that replaces it.
 */
export function stringifyWithRaw(body: unknown, raw: ReadonlyMap<string, string>): string {
  let text = JSON.stringify(body);
  for (const [placeholder, json] of raw) text = text.split(JSON.stringify(placeholder)).join(json);
  return text;
}

/** The placeholder of an entity's hostile value, replaced by {@link stringifyWithRaw}. */
export function placeholder(entityId: string): string {
  return `\u0000raw:${entityId}`;
}

/** A JSON reply whose body holds hostile values (placeholders in `raw`); a plain one when none. */
export function jsonReplyWithRaw(
  status: number,
  body: unknown,
  raw: ReadonlyMap<string, string>,
  headers?: Record<string, string>,
): Reply {
  if (raw.size === 0) return json(status, body, headers);
  const text = stringifyWithRaw(body, raw);
  return {
    status,
    raw: { contentType: 'application/json; charset=utf-8', text },
    ...(headers ? { headers } : {}),
  };
}
