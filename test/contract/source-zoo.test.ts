import { describe, expect, it } from 'vitest';
import { connectorZooRun } from '../support/zoo/connector-run.js';
import { assertZoo, zooSettings } from '../support/zoo/property.js';

/**
 * The source zoo at the connector level: sources drawn from the traits of real APIs (short pages
 * with a continuation, page caps that change, tie groups with long ids, second-precision and
 * exclusive `since`, moved records, hostile bodies, gzip, growing cursors), raced by edits, read by
 * the real connectors over the fake source's HTTP as the engine reads them, then read again by one
 * quiet incremental run: nothing lost, nothing stale, nothing served twice, every read ended,
 * integers above 2^53 exact. `ZOO_SOURCES=N` draws more; see docs/testing.md.
 */

const settings = zooSettings(200);

describe('source zoo (connector level)', () => {
  it(`${settings.numRuns} drawn sources: after a raced full read and a quiet incremental read, nothing lost, stale or duplicated`, async () => {
    const started = Date.now();
    const { sources } = await assertZoo('source zoo (connector level)', settings, connectorZooRun, {
      shrink: true,
      replay: 'npx vitest run test/contract/source-zoo.test.ts',
    });
    const seconds = (Date.now() - started) / 1_000;
    console.log(
      `source zoo (connector level): ${sources} sources in ${seconds.toFixed(1)} s (${((seconds / sources) * 1_000).toFixed(0)} ms a source), seed ${settings.seed}`,
    );
    expect(sources).toBe(settings.numRuns);
  }, 600_000);
});
