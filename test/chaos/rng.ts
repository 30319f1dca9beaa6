import { hash32, mulberry32 } from '../../tools/fake-source/prng.js';

/**
 * A small seeded PRNG for trial plans (mulberry32 underneath). A trial's plan is a pure function
 * of its seed, so `CHAOS_SEED=<seed>` replays the same plan; the interleaving of workers is real
 * concurrency and is not replayed.
 */
export class Rng {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(hash32(seed, 'chaos-plan'));
  }

  /** A number in [0, 1). */
  float(): number {
    return this.next();
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  /** `count` distinct items, in random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const chosen: T[] = [];
    while (chosen.length < count && pool.length > 0)
      chosen.push(pool.splice(this.int(0, pool.length - 1), 1)[0]!);
    return chosen;
  }
}

/**
 * The seeds of this invocation: `CHAOS_SEED` alone, or `CHAOS_TRIALS` (default 30) derived from
 * `CHAOS_BASE_SEED` (fixed in CI, so a green build is a reproducible build) or a fresh random base.
 */
export function trialSeeds(env: NodeJS.ProcessEnv = process.env): number[] {
  if (env.CHAOS_SEED !== undefined && env.CHAOS_SEED !== '') {
    const seed = Number(env.CHAOS_SEED);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`CHAOS_SEED must be a non-negative integer`);
    return [seed];
  }
  const trials = Number(env.CHAOS_TRIALS ?? 30);
  if (!Number.isSafeInteger(trials) || trials < 1) throw new Error('CHAOS_TRIALS must be a positive integer');
  const base =
    env.CHAOS_BASE_SEED !== undefined && env.CHAOS_BASE_SEED !== ''
      ? Number(env.CHAOS_BASE_SEED)
      : Math.floor(Math.random() * 0x7fff_ffff);
  if (!Number.isSafeInteger(base) || base < 0)
    throw new Error('CHAOS_BASE_SEED must be a non-negative integer');
  return Array.from({ length: trials }, (_, i) => hash32(base, 'trial', i) >>> 1);
}

/**
 * The seed of a connector's own trial: `CHAOS_SEED` when replaying, else one derived from
 * `CHAOS_BASE_SEED` (or a fresh random base) and the connector's name, so each run meets new faults.
 */
export function connectorTrialSeed(connector: string, env: NodeJS.ProcessEnv = process.env): number {
  if (env.CHAOS_SEED !== undefined && env.CHAOS_SEED !== '') return Number(env.CHAOS_SEED);
  const base =
    env.CHAOS_BASE_SEED !== undefined && env.CHAOS_BASE_SEED !== ''
      ? Number(env.CHAOS_BASE_SEED)
      : Math.floor(Math.random() * 0x7fff_ffff);
  return hash32(base, connector, 0) >>> 1;
}

/**
 * The seeds of one kind of partition trial: `CHAOS_SEED` alone when replaying, else
 * `CHAOS_PARTITION_TRIALS` (default 1) seeds derived from `CHAOS_BASE_SEED` (or a fresh random
 * base) and the kind. The first is the kind's connector-trial seed, so a fixed base keeps its trial.
 */
export function partitionTrialSeeds(kind: string, env: NodeJS.ProcessEnv = process.env): number[] {
  if (env.CHAOS_SEED !== undefined && env.CHAOS_SEED !== '') return [Number(env.CHAOS_SEED)];
  const count = Number(env.CHAOS_PARTITION_TRIALS ?? 1);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new Error('CHAOS_PARTITION_TRIALS must be a positive integer');
  const base =
    env.CHAOS_BASE_SEED !== undefined && env.CHAOS_BASE_SEED !== ''
      ? Number(env.CHAOS_BASE_SEED)
      : Math.floor(Math.random() * 0x7fff_ffff);
  return Array.from({ length: count }, (_, i) => hash32(base, `partitions-${kind}`, i) >>> 1);
}

/**
 * The seeds of the zoo trials: `CHAOS_SEED` alone when replaying, else `CHAOS_ZOO_TRIALS`
 * (default 3) seeds derived from `CHAOS_BASE_SEED` (or a fresh random base). Each seed draws one
 * source from the source zoo.
 */
export function zooTrialSeeds(env: NodeJS.ProcessEnv = process.env): number[] {
  if (env.CHAOS_SEED !== undefined && env.CHAOS_SEED !== '') return [Number(env.CHAOS_SEED)];
  const count = Number(env.CHAOS_ZOO_TRIALS ?? 3);
  if (!Number.isSafeInteger(count) || count < 0) throw new Error('CHAOS_ZOO_TRIALS must be a whole number');
  const base =
    env.CHAOS_BASE_SEED !== undefined && env.CHAOS_BASE_SEED !== ''
      ? Number(env.CHAOS_BASE_SEED)
      : Math.floor(Math.random() * 0x7fff_ffff);
  return Array.from({ length: count }, (_, i) => hash32(base, 'zoo', i) >>> 1);
}
