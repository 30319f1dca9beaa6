import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { DeadLetterStore } from '../../lib/store/dead-letters.js';
import { SourceBusyError, SourceNotFoundError } from '../../lib/store/errors.js';
import { RunLifecycle } from '../../lib/store/lifecycle.js';
import { type SourceDefinition, SourceStore } from '../../lib/store/sources.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { newRun } from '../support/runs.js';

/*
 * The Sources table's conditional writes, driven directly: undoing a source write only while the
 * row is still the one written, deleting only an idle source, and a run created only once under
 * its id.
 */

let aws: TestAws;
let sources: SourceStore;
let lifecycle: RunLifecycle;
const T0 = 1_700_000_000_000;

beforeAll(async () => {
  aws = await setUpTestAws('srcstore');
  sources = new SourceStore(aws.clients.doc, aws.names.sourcesTable);
  lifecycle = new RunLifecycle(
    aws.clients.doc,
    new SyncRunStore(aws.clients.doc, aws.names.syncRunsTable),
    sources,
    new DeadLetterStore(aws.clients.doc, aws.names.deadLettersTable),
  );
});
afterAll(() => destroyAwsClients(aws.clients));

const definition = (sourceId: string, baseUrl: string): SourceDefinition => ({
  sourceId,
  connector: 'rest-json',
  config: { baseUrl },
  schedules: [],
  configHash: `hash-of-${baseUrl}`,
});

describe('undoing a source write', () => {
  it('puts the previous definition back while the row is the one written', async () => {
    const { source: previous } = await sources.put(definition('undo', 'http://a'), T0);
    const { source: written } = await sources.put(definition('undo', 'http://b'), T0 + 1);

    expect(await sources.restore(written, previous)).toBe(true);
    expect(await sources.get('undo')).toMatchObject({ config: { baseUrl: 'http://a' }, updatedAt: T0 });
  });

  it('leaves a later write of the same definition alone', async () => {
    const { source: previous } = await sources.put(definition('same', 'http://a'), T0);
    const { source: written } = await sources.put(definition('same', 'http://b'), T0 + 1);
    await sources.put(definition('same', 'http://b'), T0 + 2);

    expect(await sources.restore(written, previous)).toBe(false);
    expect(await sources.get('same')).toMatchObject({ config: { baseUrl: 'http://b' }, updatedAt: T0 + 2 });
  });

  it('leaves another definition written in the same millisecond alone', async () => {
    const { source: previous } = await sources.put(definition('same-ms', 'http://a'), T0);
    const { source: written } = await sources.put(definition('same-ms', 'http://b'), T0 + 1);
    await sources.put(definition('same-ms', 'http://c'), T0 + 1);

    expect(await sources.restore(written, previous)).toBe(false);
    expect(await sources.get('same-ms')).toMatchObject({ config: { baseUrl: 'http://c' } });
  });

  it('deletes a source the write created, but not once a run holds it', async () => {
    const { source: created } = await sources.put(definition('created', 'http://a'), T0);
    const { source: held } = await sources.put(definition('held', 'http://a'), T0);
    await sources.acquireLock('held', 'run-1', T0 + 1);

    expect(await sources.restore(created, undefined)).toBe(true);
    expect(await sources.restore(held, undefined)).toBe(false);
    expect(await sources.get('created')).toBeUndefined();
    expect(await sources.get('held')).toMatchObject({ activeRunId: 'run-1' });
  });
});

describe('deleting a source', () => {
  it('deletes an idle source, refuses while a run holds it, and names an unknown one', async () => {
    await sources.put(definition('idle', 'http://a'), T0);
    await sources.put(definition('busy', 'http://a'), T0);
    await sources.acquireLock('busy', 'run-1', T0 + 1);

    expect(await sources.delete('idle')).toMatchObject({ sourceId: 'idle' });
    await expect(sources.delete('busy')).rejects.toBeInstanceOf(SourceBusyError);
    await expect(sources.delete('never-was')).rejects.toBeInstanceOf(SourceNotFoundError);
    expect(await sources.get('idle')).toBeUndefined();
    expect(await sources.get('busy')).toMatchObject({ activeRunId: 'run-1' });
    expect(await sources.get('never-was')).toBeUndefined();
  });
});

describe('pausing a source', () => {
  it('moves only the flag of a source that exists, and names an unknown one without creating it', async () => {
    await sources.put(definition('pausable', 'http://a'), T0);

    expect(await sources.setPaused('pausable', T0 + 5)).toMatchObject({
      sourceId: 'pausable',
      pausedAt: T0 + 5,
    });
    expect((await sources.setPaused('pausable', null)).pausedAt).toBeNull();
    await expect(sources.setPaused('never-was', T0 + 6)).rejects.toBeInstanceOf(SourceNotFoundError);
    await expect(sources.setPaused('never-was', null)).rejects.toBeInstanceOf(SourceNotFoundError);
    expect(await sources.get('never-was')).toBeUndefined();
    expect(await sources.get('pausable')).toMatchObject({ connector: 'rest-json', pausedAt: null });
  });
});

describe('the source lock', () => {
  it('is refused for a source that does not exist, and creates no row', async () => {
    await expect(sources.acquireLock('no-such-source', 'run-1', T0)).rejects.toBeInstanceOf(
      SourceNotFoundError,
    );
    expect(await sources.get('no-such-source')).toBeUndefined();
  });
});

describe('creating a run', () => {
  it('never replaces an existing run of the same id, even once its source is free again', async () => {
    await sources.put(definition('rerun', 'http://a'), T0);
    const run = newRun({ sourceId: 'rerun', now: T0 });
    await lifecycle.createHoldingLock(run);
    await lifecycle.cancel(run.runId, T0 + 1);

    await expect(lifecycle.createHoldingLock({ ...run, now: T0 + 2 })).rejects.toThrow();
    expect(await lifecycle.runs.get(run.runId)).toMatchObject({ state: 'cancelled', createdAt: T0 });
  });
});
