import fc from 'fast-check';
import {
  CONNECTOR_SIZE,
  describeSource,
  SHAPES,
  TRAITS,
  type Trait,
  type ZooSize,
  type ZooSource,
  zooSource,
} from './draw.js';

/**
 * Traits with known failures not fixed yet: never drawn, so the suite stays green while the fixes
 * land (`ZOO_PENDING=1` draws them too, to check a fix). Empty is the goal: remove a trait as
 * soon as its fix lands.
 */
export const PENDING_TRAITS: readonly Trait[] = [
  // A total below the rows served, on page numbers whose pages the source shortens after its
  // limit (post-limit filtering): a full page no longer tells that rows follow, and the total
  // says none do. Alone, a total that counts short is read past (a full page reads on).
  'countUnder',
];

/**
 * The traits a property leaves out: the pending ones, except all of them with `ZOO_PENDING=1`
 * or those named in `ZOO_PENDING=postLimitFilter,transfers` (to check one fix).
 */
export function excludedTraits(env: NodeJS.ProcessEnv = process.env): readonly Trait[] {
  const drawn = env.ZOO_PENDING ?? '';
  if (drawn === '1') return [];
  const named = new Set(drawn.split(','));
  return PENDING_TRAITS.filter((t) => !named.has(t));
}

/** How a zoo property is run: how many sources, which seed, which path to replay. */
export interface ZooSettings {
  readonly numRuns: number;
  readonly seed: number;
  readonly path?: string;
}

/**
 * Settings from the environment: `ZOO_SOURCES=N` sources (default `fallback`), `ZOO_SEED=S`
 * (default `fixedSeed`, so CI is reproducible; `ZOO_SEED=random` draws a fresh one and prints
 * it), `ZOO_PATH=P` to replay one shrunk counterexample fast-check printed.
 */
export function zooSettings(
  fallback: number,
  env: NodeJS.ProcessEnv = process.env,
  fixedSeed = 18_0001,
): ZooSettings {
  const numRuns = env.ZOO_SOURCES ? Number(env.ZOO_SOURCES) : fallback;
  const seed =
    env.ZOO_SEED === 'random'
      ? Math.floor(Math.random() * 0x7fff_ffff)
      : env.ZOO_SEED
        ? Number(env.ZOO_SEED)
        : fixedSeed;
  return env.ZOO_PATH ? { numRuns, seed, path: env.ZOO_PATH } : { numRuns, seed };
}

/**
 * Draws sources and runs `check` on each (it returns the invariants a source breaks); throws
 * with the failing source, its violations and the command that replays it. `shrink`: let
 * fast-check look for a smaller failing source (fewer traits, fewer entities) — cheap at the
 * connector level, too slow through the engine.
 */
export async function assertZoo(
  label: string,
  settings: ZooSettings,
  check: (source: ZooSource) => Promise<string[]>,
  options: { readonly shrink: boolean; readonly replay: string; readonly size?: ZooSize },
): Promise<{ readonly sources: number; readonly undrawn: readonly string[] }> {
  let sources = 0;
  const drawn: ZooSource[] = [];
  const property = fc.asyncProperty(
    zooSource(excludedTraits(), options.size ?? CONNECTOR_SIZE),
    async (source) => {
      sources += 1;
      drawn.push(source);
      const violations = await check(source);
      if (violations.length > 0) {
        throw new Error(`${describeSource(source)}\n${violations.map((v) => `  ✗ ${v}`).join('\n')}`);
      }
    },
  );
  const result = await fc.check(property, {
    numRuns: settings.numRuns,
    seed: settings.seed,
    ...(settings.path === undefined ? {} : { path: settings.path }),
    endOnFailure: !options.shrink,
  });
  if (result.failed) {
    const error =
      result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(
      [
        `${label}: a drawn source breaks an invariant after ${result.numRuns} sources (${result.numShrinks} shrinks)`,
        error,
        `  replay: ZOO_SEED=${settings.seed} ZOO_PATH=${result.counterexamplePath} ${options.replay}`,
      ].join('\n'),
    );
  }
  return { sources, undrawn: undrawn(drawn) };
}

/**
 * What no drawn source had: the drawable traits, the shapes, and a full run split into windows
 * and one read as a single stream. A small default draw is only worth its time if this is empty.
 */
export function undrawn(drawn: readonly ZooSource[]): string[] {
  const seen = new Set<string>();
  for (const s of drawn) {
    for (const t of s.traits) seen.add(t);
    seen.add(s.shape);
    seen.add(s.partitions > 1 ? 'split full run' : 'single-stream full run');
  }
  const excluded = excludedTraits();
  const wanted = [
    ...TRAITS.filter((t) => !excluded.includes(t)),
    ...SHAPES,
    'split full run',
    'single-stream full run',
  ];
  return wanted.filter((w) => !seen.has(w));
}
