/**
 * Well-formed Unicode, as DynamoDB needs it: its strings and attribute names are UTF-8, and a lone
 * UTF-16 surrogate (half of a pair, alone) has no UTF-8 form. JSON carries one as `\ud800`, so
 * sources, API bodies and JavaScript code can all hand one over.
 */

/** A lone surrogate: in a `u` regex a valid pair is one code point, so only unpaired halves are `Cs`. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

/**
 * Whether `text` is well-formed UTF-16 (no lone surrogate): `String.prototype.isWellFormed`,
 * which the ES2023 library this project compiles against does not declare.
 *
 * @example isWellFormed('e-1') // true
 * @example isWellFormed('e-1\ud800') // false
 */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * `text` with each lone surrogate replaced by U+FFFD, so it can be written: for texts that
 * describe a record (a dead letter's ref, reason and excerpt), never for the record's own data.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, '\ufffd');
}
