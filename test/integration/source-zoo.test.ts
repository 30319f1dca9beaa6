import { describe, expect, it } from 'vitest';
import { useEngineWithFakes } from '../support/harness.js';
import { ENGINE_SIZE } from '../support/zoo/draw.js';
import { engineZooRun } from '../support/zoo/engine-run.js';
import { assertZoo, zooSettings } from '../support/zoo/property.js';

/**
 * The source zoo through the real engine: sources drawn from the traits of real APIs, raced by
 * edits, harvested by a full run, an incremental and a reconciliation on the emulator. After the
 * quiet runs: nothing lost, stale or stored that the source never had, no live entity tombstoned
 * and every deleted one tombstoned, every run ended within its bound, every record the store
 * cannot hold dead-lettered alone with its page's others stored, integers above 2^53 exact.
 * The connector-level property (test/contract/source-zoo.test.ts) draws hundreds of sources;
 * this one draws fewer, each costing three runs (`ZOO_E2E_SOURCES=N` for more; docs/testing.md).
 *
 * By default it draws {@link CI_SOURCES} sources from {@link CI_SEED}: the fewest, from a seed
 * found by search, that between them have every trait, every connector shape, a split full run and
 * a single-stream one — the test checks that they do, so a new trait needs a new seed.
 */
const CI_SOURCES = 5;
const CI_SEED = 533;

// Full runs may be split (each drawn source bounds its own), also for sources this small.
const { engine } = useEngineWithFakes('zoo', {
  heartbeatIntervalMs: 500,
  env: { MAX_PARTITIONS_PER_RUN: '4', MIN_ENTITIES_PER_PARTITION: '3' },
});
const settings = zooSettings(
  CI_SOURCES,
  { ...process.env, ZOO_SOURCES: process.env.ZOO_E2E_SOURCES },
  CI_SEED,
);
const byDefault = process.env.ZOO_E2E_SOURCES === undefined && process.env.ZOO_SEED === undefined;
let counter = 0;

describe('source zoo (through the engine)', () => {
  it(`${settings.numRuns} drawn sources: after a raced full run and quiet incremental and reconciliation runs, the store matches the source`, async () => {
    const started = Date.now();
    const { sources, undrawn } = await assertZoo(
      'source zoo (through the engine)',
      settings,
      (source) => engineZooRun(engine.deps, source, `zoo-${++counter}`),
      { shrink: false, replay: 'npx vitest run test/integration/source-zoo.test.ts', size: ENGINE_SIZE },
    );
    const seconds = (Date.now() - started) / 1_000;
    console.log(
      `source zoo (through the engine): ${sources} sources in ${seconds.toFixed(1)} s (${(seconds / sources).toFixed(2)} s a source), seed ${settings.seed}`,
    );
    expect(sources).toBe(settings.numRuns);
    if (byDefault) expect(undrawn).toEqual([]);
    else if (undrawn.length > 0)
      console.log(`source zoo (through the engine): never drawn: ${undrawn.join(', ')}`);
  }, 900_000);
});
