import { createHash } from 'node:crypto';
import { stringifyJson } from '../json/lossless.js';

/**
 * The ref of a record that does not normalize and has no id the connector could read: a digest of
 * its content. The same broken record listed again — the next page of a keyed listing starts at
 * the last key and lists what followed it once more; the next run lists it again — has the same
 * ref, so it is skipped by the listing that already delivered it and files one dead letter, not
 * one per listing. Two records with identical content and no id share one entry.
 *
 * @example unidentifiedRef({ title: 'no id' }) // → 'unidentified:3f1c…' (16 hex digits)
 */
export function unidentifiedRef(raw: unknown): string {
  let text: string;
  try {
    text = stringifyJson(raw) ?? String(raw);
  } catch {
    text = String(raw);
  }
  return `unidentified:${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** True for a ref made by {@link unidentifiedRef}: a record that has no id to fetch it by. */
export function isUnidentified(ref: string): boolean {
  return ref.startsWith('unidentified:');
}
