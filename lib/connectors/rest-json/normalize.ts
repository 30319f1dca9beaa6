import { NumberValue } from '../../json/lossless.js';
import type { Normalized } from '../contract.js';
import { getPath, isRecord, toIsoTimestamp } from '../values.js';
import type { RestJsonConfig } from './config.js';

/**
 * Normalization for `rest-json`: the entity is the raw record itself; only its id and its
 * modification time are required, read from the configured dot paths. Reasons name the configured
 * path so an administrator can tell a wrong `idField` from a bad record.
 */

/**
 * The id as a string: non-empty strings as they are, finite numbers in their canonical form,
 * numbers beyond a double's precision as written.
 */
function readId(raw: Record<string, unknown>, path: string): { id: string } | { reason: string } {
  const value = getPath(raw, path);
  if (value === undefined || value === null) return { reason: `field \`${path}\` is missing` };
  if (typeof value === 'string' && value !== '') return { id: value };
  if (typeof value === 'number' && Number.isFinite(value)) return { id: String(value) };
  // A 64-bit id (a snowflake) parsed losslessly: its digits exactly as the source wrote them.
  if (value instanceof NumberValue) return { id: value.value };
  return { reason: `field \`${path}\` is not a string or number` };
}

/**
 * Normalizes one record of a `rest-json` source.
 *
 * @returns the entity (`data` is the whole record, `version` the modification time as ISO UTC with
 *   milliseconds), or `{ ok: false }` with a reason such as "field `updatedAt` is missing"; `ref` is
 *   the id when it could be read.
 */
export function normalizeRecord(config: RestJsonConfig, raw: unknown): Normalized {
  if (!isRecord(raw)) return { ok: false, reason: 'record is not an object', ref: null };
  const id = readId(raw, config.idField);
  if ('reason' in id) return { ok: false, reason: id.reason, ref: null };
  const updatedAt = getPath(raw, config.updatedAtField);
  if (updatedAt === undefined || updatedAt === null) {
    return { ok: false, reason: `field \`${config.updatedAtField}\` is missing`, ref: id.id };
  }
  const version = toIsoTimestamp(updatedAt);
  if (version === undefined) {
    return {
      ok: false,
      reason: `field \`${config.updatedAtField}\` is not an ISO 8601 time or epoch number`,
      ref: id.id,
    };
  }
  return { ok: true, entity: { id: id.id, version, data: raw } };
}
