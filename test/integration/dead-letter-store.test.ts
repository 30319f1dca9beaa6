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

describe('a record filed by neighbouring windows of one run', () => {
  // Two windows of a partitioned run meet the same broken record at their boundary B.
  const left = { windowUntil: 'B' };
  const right = { windowFrom: 'B' };
  const leftFiler = { runId: 'run-a', from: null, until: 'B', tail: false };
  const rightFiler = { runId: 'run-a', from: 'B', until: null, tail: false };

  it('counts once when both file it at the same moment', async () => {
    const [a, b] = await Promise.all([
      store.recordUnlessFiledBy(failure('both', { ...left, page: 2 }), leftFiler),
      store.recordUnlessFiledBy(failure('both', { ...right, page: 1 }), rightFiler),
    ]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
  });

  it('counts a window redoing its own page again, but not its neighbour on a page of the same number', async () => {
    expect(await store.recordUnlessFiledBy(failure('redo', { ...left, page: 3 }), leftFiler)).toBe(true);
    // The same page of the same window, redelivered: its earlier count was never committed.
    expect(await store.recordUnlessFiledBy(failure('redo', { ...left, page: 3 }), leftFiler)).toBe(true);
    // ...and the entry counts that page's attempts once.
    expect(await store.get('redo', deadLetterEntryId('item', 'e1'))).toMatchObject({ attempts: 3 });
    // The neighbour lists it on its own page 3: filed already, by the window next to it.
    expect(await store.recordUnlessFiledBy(failure('redo', { ...right, page: 3 }), rightFiler)).toBe(false);
    // Another run's window is not a neighbour.
    expect(
      await store.recordUnlessFiledBy(failure('redo', { ...right, runId: 'run-b' }), {
        ...rightFiler,
        runId: 'run-b',
      }),
    ).toBe(true);
  });

  it('does not count it for the left window once its right neighbour filed it', async () => {
    expect(await store.recordUnlessFiledBy(failure('right-first', { ...right, page: 1 }), rightFiler)).toBe(
      true,
    );
    expect(await store.recordUnlessFiledBy(failure('right-first', { ...left, page: 4 }), leftFiler)).toBe(
      false,
    );
  });

  it('counts for a tail pass what another run filed: only the filings of its own run are its own', async () => {
    const earlier = { ...rightFiler, runId: 'run-b' };
    expect(
      await store.recordUnlessFiledBy(failure('tail-other', { ...right, runId: 'run-b' }), earlier),
    ).toBe(true);
    expect(
      await store.recordUnlessFiledBy(failure('tail-other', { ...right, page: 5 }), {
        ...rightFiler,
        tail: true,
      }),
    ).toBe(true);
  });

  it('counts nothing a tail pass lists again that its run filed before', async () => {
    expect(await store.recordUnlessFiledBy(failure('tail', { ...right, page: 2 }), rightFiler)).toBe(true);
    expect(
      await store.recordUnlessFiledBy(failure('tail', { ...right, page: 5 }), { ...rightFiler, tail: true }),
    ).toBe(false);
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
