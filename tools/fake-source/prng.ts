/**
 * Seeded, stateless randomness for the fake source.
 *
 * Faults must be reproducible per request, not per process: whether the 3rd request for a page
 * fails may depend only on (seed, request key, 3), never on what other pages were asked for in
 * between. A hash of those parts gives that; a shared PRNG stream would not, because concurrent
 * workers interleave differently on every run.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Murmur3's finalizer: FNV-1a alone mixes the last characters poorly, and keys differ mostly at the end. */
function fmix32(input: number): number {
  let h = input >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A 32-bit hash of the parts, joined with a separator that cannot occur in numbers so
 * `("a1", 2)` and `("a", 12)` differ.
 *
 * @example hash32(seed, 'fault', '/records?limit=10', 2)
 */
export function hash32(...parts: readonly (string | number)[]): number {
  let h = FNV_OFFSET;
  const text = parts.join('\u0000');
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return fmix32(h);
}

/** A uniform number in [0, 1) derived from the parts; the same parts always give the same number. */
export function unit(...parts: readonly (string | number)[]): number {
  return hash32(...parts) / 0x1_0000_0000;
}

/** A uniform integer in [min, max] (both inclusive) derived from the parts. */
export function intBetween(min: number, max: number, ...parts: readonly (string | number)[]): number {
  const low = Math.ceil(Math.min(min, max));
  const high = Math.floor(Math.max(min, max));
  return low + Math.floor(unit(...parts) * (high - low + 1));
}

/** A seeded generator (mulberry32) for sequences where order is fixed, such as text and shuffles. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  };
}

/** A seeded Fisher–Yates shuffle; returns a new array and leaves the input untouched. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = result[i]!;
    result[i] = result[j]!;
    result[j] = swap;
  }
  return result;
}
