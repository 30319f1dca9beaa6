import { describe, expect, it } from 'vitest';
import { runView } from '../../lib/api/views.js';
import { NumberValue } from '../../lib/json/lossless.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * One record the store cannot hold is one dead letter: a page holding a 64-bit integer, `1e400`,
 * a 40-digit number, nesting past DynamoDB's 32 levels and an empty field name stores every other
 * record, the 64-bit integer exactly, and dead-letters each of the others alone with its reason.
 */

const setup = useEngineWithFakes('unstorable', { heartbeatIntervalMs: 200 });
const { engine } = setup;

const ODD = {
  'e-000003': 'big-integer',
  'e-000004': 'huge-number',
  'e-000005': 'too-many-digits',
  'e-000006': 'deep-nesting',
  'e-000007': 'empty-key',
} as const;

describe('a page with records DynamoDB cannot hold as sent', () => {
  it('stores the rest of the page, big integers exactly, and dead-letters each unstorable record alone', async () => {
    const fake = await setup.startFake({
      entities: 25,
      seed: 18,
      profile: { invalidRecords: 0 },
      traits: { oddValues: ODD },
    });
    await putSource(engine.deps, 'unstorable-1', 'rest-json', fakeRestConfig(fake.url, { pageSize: 10 }));

    const run = await runView(engine.deps, await setup.runToEnd('unstorable-1', 'full'));

    expect(run.state).toBe('succeeded');
    expect(run.errorCount).toBe(4);
    const stored = await engine.deps.items.listAll('unstorable-1');
    expect(stored.map((item) => item.entityId).sort()).toEqual(
      fake
        .truth()
        .entities.map((e) => e.id)
        .filter((id) => id === 'e-000003' || !(id in ODD))
        .sort(),
    );
    const big = await engine.deps.items.get('unstorable-1', 'e-000003');
    expect(big?.data.snowflake).toBeInstanceOf(NumberValue);
    expect(String(big?.data.snowflake)).toBe(String(2n ** 63n + 3n));
    const letters = await engine.deps.deadLetters.listAll('unstorable-1');
    const reasons = Object.fromEntries(letters.map((entry) => [entry.ref, entry.reason]));
    expect(Object.keys(reasons).sort()).toEqual(['e-000004', 'e-000005', 'e-000006', 'e-000007']);
    expect(reasons['e-000004']).toMatch(/number 1e400 at `score` is outside the range DynamoDB stores/);
    expect(reasons['e-000005']).toMatch(/has 40 significant digits; DynamoDB keeps 38/);
    expect(reasons['e-000006']).toMatch(/nested more than 32 levels deep/);
    expect(reasons['e-000007']).toMatch(/empty field name at `answers`/);
  });
});
