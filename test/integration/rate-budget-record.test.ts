import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { BudgetPolicy } from '../../lib/budget/pacing.js';
import { RateBudgetStore } from '../../lib/store/rate-budgets.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

/* The rate-budget record on its own: takes and settles of workers sharing one credential's record. */

let aws: TestAws;

beforeAll(async () => {
  aws = await setUpTestAws('budgetrec');
});
afterAll(() => destroyAwsClients(aws.clients));

describe('the budget record', () => {
  const policy: BudgetPolicy = { maxConcurrent: 1, leaseMs: 45_000 };
  const label = { connector: 'github-issues', origin: 'https://example.test' };
  const T0 = Date.parse('2026-12-01T00:00:00Z');

  it("expires a crashed holder's concurrency slot", async () => {
    const store = new RateBudgetStore(aws.clients.doc, aws.names.rateBudgetsTable);
    const key = `crash-${Date.now()}`;
    expect((await store.take(key, label, T0, policy, 'crashed', undefined)).kind).toBe('go');
    // The holder died without settling: its slot is held until the lease lapses, then frees.
    expect((await store.take(key, label, T0 + 1_000, policy, 'next', undefined)).kind).toBe('busy');
    expect((await store.take(key, label, T0 + 44_999, policy, 'next', undefined)).kind).toBe('busy');
    expect((await store.take(key, label, T0 + 45_000, policy, 'next', undefined)).kind).toBe('go');
  });

  it("gives a new credential's only slot to one of two workers that both found no record", async () => {
    const key = `first-${Date.now()}`;
    const [a, b] = [
      new RateBudgetStore(aws.clients.doc, aws.names.rateBudgetsTable),
      new RateBudgetStore(aws.clients.doc, aws.names.rateBudgetsTable),
    ];
    expect([await a.read(key), await b.read(key)]).toEqual([null, null]);

    expect((await a.take(key, label, T0, policy, 'a', undefined)).kind).toBe('go');
    // Worker b still believes there is no record: its first write must not replace a's.
    expect((await b.take(key, label, T0 + 10, policy, 'b', undefined)).kind).toBe('busy');
  });

  it('frees a concurrency slot for a worker that saw it taken, once another worker released it', async () => {
    const key = `release-${Date.now()}`;
    const table = aws.names.rateBudgetsTable;
    const [a, b] = [new RateBudgetStore(aws.clients.doc, table), new RateBudgetStore(aws.clients.doc, table)];
    expect((await a.take(key, label, T0, policy, 'a', undefined)).kind).toBe('go');
    expect((await b.take(key, label, T0 + 10, policy, 'b', undefined)).kind).toBe('busy');
    await a.settle(key, label, T0 + 20, policy, 'a', {});
    // Worker b last saw the slot taken; it must not wait for the lease to lapse.
    expect((await b.take(key, label, T0 + 30, policy, 'b', undefined)).kind).toBe('go');
  });

  it('hands each remaining request to exactly one of many workers taking at once', async () => {
    const key = `race-${Date.now()}`;
    const table = aws.names.rateBudgetsTable;
    const uncapped: BudgetPolicy = { maxConcurrent: 0, leaseMs: 45_000 };
    const first = new RateBudgetStore(aws.clients.doc, table);
    await first.settle(key, label, T0, uncapped, null, { limit: 5, remaining: 5, resetAt: T0 + 60_000 });
    // Twelve workers, each with its own view of the record, all asking at the same moment.
    const workers = Array.from({ length: 12 }, () => new RateBudgetStore(aws.clients.doc, table));
    const results = await Promise.all(
      workers.map((worker, i) => worker.take(key, label, T0 + 10, uncapped, `w${i}`, undefined)),
    );
    const kinds = results.map((r) => r.kind).sort();
    // Five go now, five hold their own slots of the next window; the window length is not known
    // yet, so the last two are promised nothing further and ask again when the next one opens.
    expect(kinds.filter((k) => k === 'go')).toHaveLength(5);
    expect(kinds.filter((k) => k === 'reserved')).toHaveLength(5);
    expect(kinds.filter((k) => k === 'wait')).toHaveLength(2);
    const slots = results.flatMap((r) => (r.kind === 'reserved' ? [r.slot.at] : []));
    expect(new Set(slots).size).toBe(5);
    expect(await first.read(key)).toMatchObject({ remaining: 0, ahead: 5 });
  });
});
