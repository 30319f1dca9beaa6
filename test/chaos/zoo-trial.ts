import fc from 'fast-check';
import { describeSource, ENGINE_SIZE, zooSource } from '../support/zoo/draw.js';
import { engineZooRun } from '../support/zoo/engine-run.js';
import { excludedTraits } from '../support/zoo/property.js';
import type { ChaosEnv } from './chaos-env.js';

/** The source's own faults in a zoo trial: transient 5xx and 429s, never one request failing for good. */
const ZOO_FAULTS = { transientRate: 0.05, rate429: 0.03, retryAfterSeconds: 1 } as const;

/**
 * A zoo trial: one source drawn from the source zoo by `seed` (the same draw as the zoo property
 * tests, pending traits left out), harvested through the chaos environment — its faulty queue,
 * in-process workers and worker process — while the source throttles and fails requests. The
 * checks are the zoo's (`engine-run.ts`).
 */
export async function zooTrial(
  env: ChaosEnv,
  seed: number,
): Promise<{ readonly violations: string[]; readonly report: string }> {
  const [source] = fc.sample(zooSource(excludedTraits(), ENGINE_SIZE), { seed, numRuns: 1 });
  if (source === undefined) throw new Error(`zoo trial ${seed}: nothing drawn`);
  const started = Date.now();
  const violations = await engineZooRun(env.deps, source, `chaos-zoo-${seed}`, ZOO_FAULTS);
  const report = [
    `zoo trial seed ${seed}: ${describeSource(source)} (${((Date.now() - started) / 1_000).toFixed(1)} s)`,
    ...violations.map((v) => `  ✗ ${v}`),
    `  replay: CHAOS_SEED=${seed} npm run test:chaos -- -t 'zoo trials'`,
  ].join('\n');
  return { violations, report };
}
