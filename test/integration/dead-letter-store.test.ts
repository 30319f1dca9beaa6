import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { DeadLetterStore, deadLetterEntryId, type FailureRecord } from '../../lib/store/dead-letters.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

/* The dead-letter store's two conditional writes, driven directly. */

let aws: TestAws;
let store: DeadLetterStore;

beforeAll(async () => {
  aws = await setUpTestAws('dlstore');
  store = new DeadLetterStore(aws.clients.doc, aws.names.deadLettersTable);
});
afterAll(() => destroyAwsClients(aws.clients));

const failure = (sourceId: string, overrides: Partial<FailureRecord> = {}): FailureRecord => ({
  sourceId,
  kind: 'item',
  ref: 'e1',
  errorClass: 'transient',
  reason: 'HTTP 503',
  attempts: 3,
  runId: 'run-a',
  page: 1,
  now: 1_000,
  ...overrides,
});

describe('recording a failure', () => {
  it('creates the entry, counts a redelivered page once, and counts a failure of another page', async () => {
    const entryId = await store.record(failure('record'));
    expect(await store.get('record', entryId)).toMatchObject({ attempts: 3, lastFailedAt: 1_000 });

    // The same run and page delivered again: the entry is as it was.
    await store.record(failure('record', { now: 2_000 }));
    expect(await store.get('record', entryId)).toMatchObject({ attempts: 3, lastFailedAt: 1_000 });

    await store.record(failure('record', { page: 2, now: 3_000 }));
    expect(await store.get('record', entryId)).toMatchObject({ attempts: 6, lastFailedAt: 3_000 });
  });
});

describe('resolving loaded entities', () => {
  it('resolves an entry that last failed at or before the load, never one that failed again after it', async () => {
    await store.record(failure('resolve', { ref: 'before', now: 1_000 }));
    await store.record(failure('resolve', { ref: 'same-ms', now: 2_000 }));
    await store.record(failure('resolve', { ref: 'after', now: 3_000 }));

    const resolved = await store.resolveLoaded('resolve', ['before', 'same-ms', 'after'], 2_000);

    expect(resolved.sort()).toEqual([
      deadLetterEntryId('item', 'before'),
      deadLetterEntryId('item', 'same-ms'),
    ]);
    expect(await store.get('resolve', deadLetterEntryId('item', 'after'))).toMatchObject({
      lastFailedAt: 3_000,
    });
    expect(await store.get('resolve', deadLetterEntryId('item', 'before'))).toBeUndefined();
  });
});
