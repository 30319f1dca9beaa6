import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiDeps } from '../../lib/api/deps.js';
import { runView } from '../../lib/api/views.js';
import { ApiClient } from '../../lib/cli/client.js';
import { printJson } from '../../lib/cli/output.js';
import { loadConfig } from '../../lib/config/env.js';
import { NumberValue } from '../../lib/json/lossless.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import { PROPERTY_NAMES_JSON } from '../../tools/fake-source/traits/bodies.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * One record the store cannot hold is one dead letter: a page holding a 64-bit integer, `1e400`
 * and nesting past DynamoDB's 32 levels stores every other record, the 64-bit integer exactly,
 * and dead-letters each of the others alone with its reason.
 */

const setup = useEngineWithFakes('unstorable', { heartbeatIntervalMs: 200 });
const { engine } = setup;
let server: DevServer | undefined;
afterAll(async () => server?.stop());

/** The item as `harvester items get --json` prints it, through the local API. */
async function printedByCli(sourceId: string, entityId: string): Promise<string> {
  const { aws } = engine;
  const config = loadConfig({
    HARVESTER_PREFIX: aws.prefix,
    AWS_ENDPOINT_URL: aws.endpoint,
    LOG_LEVEL: 'SILENT',
  });
  server ??= await startDevServer({
    deps: createApiDeps(engine.deps, { config, scheduler: aws.clients.scheduler }),
  });
  const item = await new ApiClient({ endpoint: server.url }).get(`/sources/${sourceId}/items/${entityId}`);
  let printed = '';
  const out = new Writable({
    write: (chunk, _encoding, done) => {
      printed += String(chunk);
      done();
    },
  });
  printJson({ out, err: out }, item);
  return printed;
}

describe('a page with records DynamoDB cannot hold as sent', () => {
  it('stores the rest of the page, big integers exactly, and dead-letters each unstorable record alone', async () => {
    const fake = await setup.startFake({
      entities: 25,
      seed: 18,
      profile: { invalidRecords: 0 },
      traits: { hostileBodies: 3 },
    });
    await putSource(engine.deps, 'unstorable-1', 'rest-json', fakeRestConfig(fake.url, { pageSize: 10 }));

    const run = await runView(engine.deps, await setup.runToEnd('unstorable-1', 'full'));

    expect(run.state).toBe('succeeded');
    expect(run.errorCount).toBe(2);
    const { hostile, bigIntegers } = fake.truth();
    const [bigId, hugeId, deepId] = ['big-integer', 'overflow', 'deep'].map(
      (kind) => Object.keys(hostile).find((id) => hostile[id] === kind) ?? '',
    ) as [string, string, string];
    const stored = await engine.deps.items.listAll('unstorable-1');
    expect(stored.map((item) => item.entityId).sort()).toEqual(
      fake
        .truth()
        .entities.map((e) => e.id)
        .filter((id) => id !== hugeId && id !== deepId)
        .sort(),
    );
    const big = await engine.deps.items.get('unstorable-1', bigId);
    expect(big?.data.big).toBeInstanceOf(NumberValue);
    expect(String(big?.data.big)).toBe(bigIntegers[bigId]);
    expect(await printedByCli('unstorable-1', bigId)).toContain(`"big": ${bigIntegers[bigId]}`);
    const letters = await engine.deps.deadLetters.listAll('unstorable-1');
    const reasons = Object.fromEntries(letters.map((entry) => [entry.ref, entry.reason]));
    expect(Object.keys(reasons).sort()).toEqual([hugeId, deepId].sort());
    expect(reasons[hugeId]).toMatch(/number 1e400 at `huge` is outside the range DynamoDB stores/);
    expect(reasons[deepId]).toMatch(/nested more than 32 levels deep/);
  });
});

describe('a page with records whose field names or ids are hostile', () => {
  it('stores property-named fields exactly and dead-letters a lone surrogate in a name or an id alone, committing the page at once', async () => {
    const fake = await setup.startFake({
      entities: 12,
      seed: 21,
      profile: { invalidRecords: 0 },
      traits: { hostileKeys: 3 },
    });
    await putSource(engine.deps, 'hostile-keys', 'rest-json', fakeRestConfig(fake.url, { pageSize: 20 }));

    const run = await runView(engine.deps, await setup.runToEnd('hostile-keys', 'full'));

    expect(run.state).toBe('succeeded');
    expect(run.errorCount).toBe(2);
    // One page, read once: nothing was redelivered.
    expect(fake.stats().duplicatePageServes).toBe(0);
    const { hostile } = fake.truth();
    const idOf = (kind: string) => Object.keys(hostile).find((id) => hostile[id] === kind) ?? '';
    const [named, badName, badId] = [idOf('property-names'), idOf('surrogate-name'), idOf('surrogate-id')];
    const stored = await engine.deps.items.listAll('hostile-keys');
    expect(stored.map((item) => item.entityId).sort()).toEqual(
      fake
        .truth()
        .entities.map((e) => e.id)
        .filter((id) => id !== badName && id !== badId)
        .sort(),
    );
    const car = (await engine.deps.items.get('hostile-keys', named))?.data.car;
    expect(JSON.stringify(car)).toBe(PROPERTY_NAMES_JSON);
    const letters = await engine.deps.deadLetters.listAll('hostile-keys');
    const reasons = Object.fromEntries(letters.map((entry) => [entry.ref, entry.reason]));
    expect(Object.keys(reasons).sort()).toEqual([badName, `${badId}\ufffd`].sort());
    expect(reasons[badName]).toMatch(
      /field name "bad\\ud800name" at the record holds an unpaired UTF-16 surrogate/,
    );
    expect(reasons[`${badId}\ufffd`]).toMatch(/id "e-\d+\\ud800" holds an unpaired UTF-16 surrogate/);
  });
});
