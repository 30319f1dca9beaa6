import { hash32 } from '../prng.js';

/**
 * Long record ids: UUIDs of version 7, whose first 48 bits are a time, so ids sort in creation
 * order as databases keyed by UUIDv7 list them. Here the "time" is the entity's number and the
 * random bits come from the seed: the same entity always has the same id, and the fake can tell
 * the entity from the id.
 */

const LONG_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function hex(value: number, width: number): string {
  return (value >>> 0).toString(16).padStart(8, '0').slice(-width);
}

/**
 * The long id of entity `number` (36 characters).
 *
 * @example longRecordId(7, 1) // '00000000-0001-7xxx-8xxx-xxxxxxxxxxxx'
 */
export function longRecordId(seed: number, number: number): string {
  const time = number.toString(16).padStart(12, '0');
  const r = (salt: string) => hash32(seed, 'uuid', salt, number);
  const variant = (8 + (r('v') % 4)).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${hex(r('a'), 3)}-${variant}${hex(r('b'), 3)}-${hex(r('c'), 4)}${hex(r('d'), 8)}`;
}

/** The entity number a long id encodes, or null when `id` is not shaped like one. */
export function resolveLongId(id: string): number | null {
  const match = LONG_ID.exec(id);
  return match ? Number.parseInt(`${match[1]}${match[2]}`, 16) : null;
}
