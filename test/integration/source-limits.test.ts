import { describe, expect, it } from 'vitest';
import { testSource } from '../../lib/api/source-test.js';
import { runView } from '../../lib/api/views.js';
import type { TraitOptions } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * What a source may send is bounded: a body that inflates past the byte limit, a page holding far
 * more records than asked for, a cursor that grows past its limit each fail their page as a
 * permanent, classified error that names the limit — in a run and in a connection check alike.
 */

const setup = useEngineWithFakes('src-limits', { heartbeatIntervalMs: 200 });
const { engine } = setup;
let counter = 0;

async function sourceWith(traits: TraitOptions, overrides: Record<string, unknown> = {}) {
  const fake = await setup.startFake({ entities: 30, seed: 8, profile: { invalidRecords: 0 }, traits });
  const sourceId = `src-limits-${++counter}`;
  await putSource(
    engine.deps,
    sourceId,
    'rest-json',
    fakeRestConfig(fake.url, { pageSize: 10, ...overrides }),
  );
  return sourceId;
}

async function failedPage(sourceId: string) {
  const run = await runView(engine.deps, await setup.runToEnd(sourceId, 'full'));
  const [letter] = await engine.deps.deadLetters.listAll(sourceId);
  return { run, letter };
}

describe('a source that sends more than its limits', () => {
  it('a gzip body inflating past the byte limit fails its page, read no further than the limit', async () => {
    // ~20 KB on the wire, 20 MiB inflated, streamed without a length: only counting can stop it.
    const sourceId = await sourceWith({ gzip: true, padBytes: 20 * 1_024 * 1_024, hideLength: true });

    const { run, letter } = await failedPage(sourceId);

    expect(run.state).toBe('failed');
    expect(run.failure?.message).toMatch(
      /larger than 16777216 bytes once decompressed.*limits\.maxBodyBytes/,
    );
    expect(letter).toMatchObject({ kind: 'page', errorClass: 'permanent', attempts: 1 });
  });

  it('a body whose Content-Length is over a lowered limit is refused', async () => {
    const sourceId = await sourceWith({ padBytes: 200_000 }, { limits: { maxBodyBytes: 100_000 } });

    const { run } = await failedPage(sourceId);

    expect(run.failure?.message).toMatch(
      /announces \d+ bytes \(Content-Length\), more than this source's limit of 100000/,
    );
  });

  it('a page far larger than asked for fails as over the records limit', async () => {
    // Asked for 5 a page (so at most 20 by default), the source answers all 30.
    const sourceId = await sourceWith({ ignoreLimit: 1_000 }, { pageSize: 5 });

    const { run, letter } = await failedPage(sourceId);

    expect(run.failure?.message).toMatch(/holds 30 records, more than this source's limit of 20 a page/);
    expect(letter?.reason).toMatch(/limits\.maxRecordsPerPage/);
  });

  it('a cursor that grows past the cursor limit fails the page that returned it', async () => {
    // The cursor gains ~1 KB a page: ~1.1 KB after the first page, ~2.2 KB after the second.
    const sourceId = await sourceWith({ cursorGrowth: 800 });

    const { run } = await failedPage(sourceId);

    expect(run.progress.processed).toBe(10);
    expect(run.failure?.message).toMatch(
      /next-page cursor .* is \d{4} characters, more than this source's limit of 2048/,
    );
  });

  it('a connection check obeys the same limits', async () => {
    const sourceId = await sourceWith({ gzip: true, padBytes: 20 * 1_024 * 1_024, hideLength: true });

    const result = await testSource(engine.deps, await engine.deps.sources.require(sourceId));

    expect(result.ok).toBe(false);
    expect(result.problem).toMatchObject({ errorClass: 'permanent' });
    expect(result.problem?.reason).toMatch(/once decompressed/);
  });

  it('a source within its limits is read whole', async () => {
    const sourceId = await sourceWith({ gzip: true, padBytes: 100_000, cursorGrowth: 100 });

    const run = await runView(engine.deps, await setup.runToEnd(sourceId, 'full'));

    expect(run.state).toBe('succeeded');
    expect(run.progress.processed).toBe(30);
  });
});
