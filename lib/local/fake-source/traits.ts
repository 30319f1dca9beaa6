import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { NumberValue, stringifyJson } from '../../json/lossless.js';

/**
 * Switchable behaviours real APIs have that a well-behaved source does not: records JSON cannot
 * carry naively, bodies far larger than their wire size, pages larger than asked for, cursors that
 * grow. Each is off by default; turn them on with the `traits` option or `set-traits` control.
 */

/** Values a record can carry that DynamoDB, or a double, cannot hold as they are. */
export const ODD_VALUES = [
  /** Twitter/X API v1.1 writes tweet and user ids as bare 64-bit JSON numbers (`id`, with `id_str` beside it because JavaScript rounds them); Discord's and Instagram's snowflakes are the same size. Storable exactly. */
  'big-integer',
  /** RFC 8259 leaves number range to implementations; a Python service serializing `Decimal('1E+400')` sends `1e400`, which no double (→ Infinity) and no DynamoDB number holds. */
  'huge-number',
  /** Ethereum JSON-RPC indexers report balances in wei as bare integers; a sum of them easily passes 38 digits, DynamoDB's precision. */
  'too-many-digits',
  /** Reddit's comment listings nest one `replies.data.children` level per reply; a long thread passes DynamoDB's 32 levels. */
  'deep-nesting',
  /** JSON allows an empty key; form APIs echoing user-defined field names (Typeform hidden fields) can send `{"": …}`, an attribute name DynamoDB refuses. */
  'empty-key',
] as const;

/** One kind of {@link ODD_VALUES}. */
export type OddValue = (typeof ODD_VALUES)[number];

/** The trait settings; see each field. */
export const traitsSchema = z.strictObject({
  /** Entity id → the odd value its rest-json record carries (in a field named after the kind). */
  oddValues: z.record(z.string(), z.enum(ODD_VALUES)).default({}),
  /** GitHub, GitLab and most APIs behind nginx or CloudFront gzip replies for clients that accept it, as `fetch` does. */
  gzip: z.boolean().default(false),
  /**
   * Bytes of JSON whitespace appended to every source reply: the body means the same, it is only
   * larger. With `gzip`, a decompression bomb (a broken or hostile endpoint: 49 KB on the wire,
   * 48 MB inflated).
   */
  padBytes: z
    .number()
    .int()
    .min(0)
    .max(512 * 1_024 * 1_024)
    .default(0),
  /** Replies streamed without `Content-Length` (chunked), as streaming proxies and export endpoints send them. */
  hideLength: z.boolean().default(false),
  /**
   * The rest-json listings ignore `limit` and answer this many records: APIs that do not know the
   * page-size parameter they were sent answer with their own default, or with the whole collection.
   */
  ignoreLimit: z.number().int().min(1).max(10_000_000).optional(),
  /**
   * Characters each rest-json `next_cursor` grows by, page after page: cursors that carry state
   * (Elasticsearch scroll ids, search contexts embedded in GraphQL `endCursor`s, Google API page
   * tokens of kilobytes) grow with what they carry.
   */
  cursorGrowth: z.number().int().min(0).max(1_000_000).default(0),
});

/** Trait settings as given (every field optional). */
export type TraitsInput = z.input<typeof traitsSchema>;
/** Trait settings with defaults applied. */
export type Traits = z.output<typeof traitsSchema>;

/** Every trait off. */
export const NO_TRAITS: Traits = traitsSchema.parse({});

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { text: 'the innermost reply' };
  for (let i = 0; i < levels; i++) value = { reply: value };
  return value;
}

/** The field an odd record carries: named after its kind, holding the value that makes it odd. */
export function oddField(kind: OddValue, entityNumber: number): Record<string, unknown> {
  switch (kind) {
    case 'big-integer':
      // 2^63 + n: different for every entity, and every one beyond 2^53.
      return { snowflake: new NumberValue(String(2n ** 63n + BigInt(entityNumber))) };
    case 'huge-number':
      return { score: new NumberValue('1e400') };
    case 'too-many-digits':
      return { balance: new NumberValue(`1${'2'.repeat(39)}`) };
    case 'deep-nesting':
      return { thread: nested(40) };
    case 'empty-key':
      return { answers: { '': 'an unnamed field' } };
  }
}

/** A reply body as the traits serve it: its JSON text (lossless) and the headers it needs. */
export function renderBody(
  body: unknown,
  traits: Traits,
): { readonly bytes: Buffer; readonly headers: Record<string, string> } {
  let text = stringifyJson(body);
  if (traits.padBytes > 0) text += ' '.repeat(traits.padBytes);
  const bytes = traits.gzip ? gzipSync(text) : Buffer.from(text);
  return { bytes, headers: traits.gzip ? { 'content-encoding': 'gzip' } : {} };
}
