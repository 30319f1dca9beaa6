import { createHash } from 'node:crypto';
import { isWellFormed } from '../json/unicode.js';

/**
 * The ids a keyset position names (lib/connectors/keyset.ts) and a partition keeps at its
 * latest version (partitions.ts), in a size that does not depend on the source.
 * A position lists the ids read at its key, up to two pages of them inside a tie group; with
 * UUIDs or URLs for ids that is tens of kilobytes per hundred. A long id is kept as a 72-bit
 * digest instead (13 characters): the position only asks "was this id read already?", which a
 * digest answers with a chance of a false "yes" of about one in 10^13 over a whole tie group of
 * 20,000 ids.
 * Short ids stay as they are, so positions of sources with short ids read as before. An id that is
 * not well-formed Unicode (a lone UTF-16 surrogate, which has no UTF-8 form, so DynamoDB cannot
 * store it) is kept as a digest of its UTF-16 code units whatever its length: the record itself
 * is dead-lettered, but the ids a partition read are written with its checkpoint.
 *
 * @example compactId('e-000001') // 'e-000001'
 * @example compactId('0191c3a4-7b1e-7c55-9d1a-3f0c2e9b8a71') // '~' + 12 characters
 * @example compactId('e-1\ud800') // '~' + 12 characters
 */

/** Ids up to this length are kept as they are. */
const KEPT_AS_IS = 13;

/** A digest as {@link compactId} writes it. */
const DIGEST = /^~[A-Za-z0-9_-]{12}$/;

/** The form an id takes in a position: itself when short, else its digest. Idempotent. */
export function compactId(id: string): string {
  const wellFormed = isWellFormed(id);
  if (DIGEST.test(id) || (wellFormed && id.length <= KEPT_AS_IS && !id.startsWith('~'))) return id;
  // UTF-8 would turn every lone surrogate into U+FFFD, so two such ids could share a digest.
  const units = wellFormed ? Buffer.from(id) : Buffer.from(id, 'utf16le');
  return `~${createHash('sha256').update(units).digest('base64url').slice(0, 12)}`;
}

/** A set of ids (as read, or as a position keeps them) that answers for either form. */
export function idSet(ids: Iterable<string>): { has(id: string): boolean } {
  const compacted = new Set<string>();
  for (const id of ids) compacted.add(compactId(id));
  return { has: (id) => compacted.has(compactId(id)) };
}
