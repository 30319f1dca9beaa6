import { ClassifiedError } from '../retry/errors.js';

/**
 * A secret is never written down. A hostile (or careless) source can echo what it was sent — the
 * `Authorization` header in a record, the token in its next-page URL or in an error body — so
 * everything that leaves a fetch to be stored, shown or logged is scrubbed of every value resolved
 * for it, in every spelling it may take there: as stored, as sent (trimmed), percent-encoded as a
 * URL component, a form value or a query, base64 (standard and URL-safe), and any header value that
 * carried it (a `Basic` credential is base64 of `user:secret`, which holds none of the others).
 *
 * Name-based redaction (`lib/connectors/redact-url.ts`) stays for what has no resolved value behind
 * it (a presigned URL's signature); this module goes by value, so no parameter name can hide one.
 */

/** Stands for a secret in anything shown or stored. */
export const REDACTED_SECRET = '<redacted>';

/**
 * Characters trimmed off a resolved value: whitespace and control characters at either end. A file
 * stored with `--value file://token.txt` ends in `\n`; `Headers` trims that off on the wire, so a
 * check looking for the stored value would look for something that is never sent.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is trimmed.
const EDGES = /^[\s\u0000-\u001f\u007f]+|[\s\u0000-\u001f\u007f]+$/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The value a secret is used with: the stored value without leading or trailing whitespace or
 * control characters (trimmed rather than refused: that is what `Headers` sends anyway, and a
 * trailing newline from a file is the common case). A control character left inside (a CR/LF pair
 * that could split a header) or nothing left at all is refused, naming the reference.
 *
 * @example
 * wireSecret('ssm:/harvester/acme/token', 'ACME-1\n'); // 'ACME-1'
 * @throws ClassifiedError (permanent) when the value is empty once trimmed or holds a control character.
 */
export function wireSecret(reference: string, stored: string): string {
  const value = stored.replace(EDGES, '');
  if (value.length === 0)
    throw new ClassifiedError('permanent', `secret ${reference} is empty once whitespace is trimmed`);
  if (CONTROL.test(value))
    throw new ClassifiedError(
      'permanent',
      `secret ${reference} holds a control character inside its value; store it without one`,
    );
  return value;
}

function tryEncode(encode: () => string): string[] {
  try {
    return [encode()];
  } catch {
    return [];
  }
}

/**
 * Every spelling of `value` a request, a record or a URL may hold: raw, trimmed, percent-encoded
 * (component, form, query and URI sets), base64 and base64url. Longest first, so a longer spelling
 * is replaced before a shorter one inside it.
 */
export function secretSpellings(value: string): string[] {
  const spellings = new Set<string>();
  for (const form of new Set([value, value.replace(EDGES, '')])) {
    if (form.length === 0) continue;
    spellings.add(form);
    spellings.add(encodeURIComponent(form));
    spellings.add(new URLSearchParams({ v: form }).toString().slice(2));
    for (const encoded of tryEncode(() => encodeURI(form))) spellings.add(encoded);
    for (const encoded of tryEncode(() => new URL(`http://h/?${form}`).search.slice(1)))
      spellings.add(encoded);
    spellings.add(Buffer.from(form).toString('base64'));
    spellings.add(Buffer.from(form).toString('base64url'));
  }
  return [...spellings].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

/**
 * The resolved values of one fetch, a step or a connection check, and what scrubs them. Values are
 * noted as they are resolved and as requests carry them; `scrub` applies every one noted so far.
 */
export interface SecretScrubber {
  /** Notes a resolved value (every spelling of it is scrubbed from now on). */
  note(value: string): void;
  /** Notes text that carried a secret on the wire, as is (a header value, a `Basic` credential). */
  noteSent(text: string): void;
  /** True when `text` holds any spelling of a value noted so far. */
  carries(text: string): boolean;
  /**
   * `value` (any JSON-like value) with every noted spelling replaced by {@link REDACTED_SECRET}, in
   * strings and object keys, plain objects and arrays rebuilt only where something changed; other
   * objects (a lossless number) are kept as they are.
   */
  scrub<T>(value: T): T;
}

/** A scrubber that knows nothing yet. */
export function createSecretScrubber(): SecretScrubber {
  let spellings: string[] = [];
  const add = (texts: readonly string[]) => {
    const next = new Set([...spellings, ...texts.filter((t) => t.length > 0)]);
    if (next.size !== spellings.length) spellings = [...next].sort((a, b) => b.length - a.length);
  };
  const scrubText = (text: string): string => {
    let out = text;
    for (const spelling of spellings)
      if (out.includes(spelling)) out = out.split(spelling).join(REDACTED_SECRET);
    return out;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return scrubText(value);
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((inner) => {
        const scrubbed = walk(inner);
        if (scrubbed !== inner) changed = true;
        return scrubbed;
      });
      return changed ? out : value;
    }
    if (value !== null && typeof value === 'object' && isPlain(value)) {
      let changed = false;
      const entries = Object.entries(value).map(([key, inner]) => {
        const k = scrubText(key);
        const v = walk(inner);
        if (k !== key || v !== inner) changed = true;
        return [k, v] as const;
      });
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  };
  return {
    note: (value) => add(secretSpellings(value)),
    noteSent: (text) => add([text, text.replace(EDGES, '')]),
    carries: (text) => spellings.some((spelling) => text.includes(spelling)),
    scrub: <T>(value: T): T => (spellings.length === 0 ? value : (walk(value) as T)),
  };
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
