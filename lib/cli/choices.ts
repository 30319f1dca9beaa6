import { CliUsageError } from './errors.js';

/**
 * Option values checked before any request: the API would refuse them too, but in its
 * validator's words ("Invalid option: expected one of …", "Too big: expected number to be
 * <=100"); here the message names the option, the allowed values, and the closest one.
 */

/** Edit distance between two short strings (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The allowed value a mistyped one most likely meant: same letters in another case, a prefix
 * (`incr` → `incremental`), or within a third of its length in edits (`ful` → `full`).
 */
export function closest(value: string, allowed: readonly string[]): string | undefined {
  const lower = value.toLowerCase().replace(/-/g, '_');
  const exact = allowed.find((a) => a.toLowerCase().replace(/-/g, '_') === lower);
  if (exact) return exact;
  const prefixed = allowed.filter((a) => lower.length >= 2 && a.toLowerCase().startsWith(lower));
  if (prefixed.length === 1) return prefixed[0];
  const ranked = allowed.map((a) => ({ a, d: distance(lower, a.toLowerCase()) })).sort((x, y) => x.d - y.d);
  const best = ranked[0];
  if (!best || best.d > Math.max(1, Math.floor(best.a.length / 3))) return undefined;
  return ranked[1]?.d === best.d ? undefined : best.a;
}

/** A commander parser accepting one of `allowed`, refusing anything else with a suggestion. */
export function oneOf<T extends string>(option: string, allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if ((allowed as readonly string[]).includes(value)) return value as T;
    const guess = closest(value, allowed);
    throw new CliUsageError(
      `${option} "${value}" is not one of ${allowed.join(', ')}${guess ? `; did you mean ${option} ${guess}?` : ''}`,
    );
  };
}

/** A commander parser accepting a whole number from `min` to `max`. */
export function intInRange(option: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n))
      throw new CliUsageError(`${option} must be a whole number from ${min} to ${max}, got "${value}"`);
    if (n < min || n > max)
      throw new CliUsageError(
        `${option} ${value} is out of range: ${min}–${max}; did you mean ${option} ${n < min ? min : max}?`,
      );
    return n;
  };
}

/** Most entries one list page may hold: the API's `limit` maximum (a test keeps them equal). */
export const MAX_LIST_LIMIT = 100;

/** Connector names, without loading the connectors (a test keeps this equal to the registry). */
export const CONNECTOR_CHOICES = ['github-issues', 'gitlab-issues', 'rest-json', 's3-objects'] as const;
