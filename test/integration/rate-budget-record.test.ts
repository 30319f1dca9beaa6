import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { GRANT } from '../../lib/budget/grants.js';
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

  describe('a grant of several requests to one worker', () => {
    const plenty: BudgetPolicy = { maxConcurrent: 10, leaseMs: 45_000 };
    const window = { limit: 5_000, remaining: 4_000, resetAt: T0 + 600_000 };

    async function granted(hint: string) {
      const key = `${hint}-${Date.now()}`;
      const store = new RateBudgetStore(aws.clients.doc, aws.names.rateBudgetsTable);
      await store.settle(key, label, T0, plenty, null, window);
      const first = await store.take(key, label, T0 + 10, plenty, 'grant', undefined);
      expect(first).toMatchObject({ kind: 'go', tokens: GRANT.tokens, leaseId: 'grant' });
      return { key, store, observer: new RateBudgetStore(aws.clients.doc, aws.names.rateBudgetsTable) };
    }

    it('sends its requests with one write while their responses are quiet, and is handed back by the next take', async () => {
      const { key, store, observer } = await granted('grant-quiet');
      const quiet = { ...window, remaining: 3_999 };
      await store.settle(key, label, T0 + 20, plenty, 'grant', quiet);
      for (let i = 1; i < GRANT.tokens; i++) {
        const next = await store.take(key, label, T0 + 20 + i * 10, plenty, `own-${i}`, undefined);
        expect(next).toMatchObject({ kind: 'go', leaseId: 'grant' });
        await store.settle(key, label, T0 + 25 + i * 10, plenty, 'grant', quiet);
      }
      // Nothing written since the grant: the record still counts it and holds its lease.
      expect(await observer.read(key)).toMatchObject({ remaining: 4_000 - GRANT.tokens });
      expect(Object.keys((await observer.read(key))!.leases)).toEqual(['grant']);

      await store.take(key, label, T0 + 200, plenty, 'after', undefined);

      expect(Object.keys((await observer.read(key))!.leases)).toEqual(['after']);
      expect((await observer.read(key))!.remaining).toBe(4_000 - 2 * GRANT.tokens);
    });

    it('ends at a refusal, which every worker learns at once', async () => {
      const { key, store, observer } = await granted('grant-refused');

      await store.settle(key, label, T0 + 20, plenty, 'grant', { ...window, remaining: 0 }, true);

      expect(await observer.read(key)).toMatchObject({ remaining: 0, leases: {} });
      expect((await store.take(key, label, T0 + 30, plenty, 'next', undefined)).kind).not.toBe('go');
    });

    it('keeps the slot of a request that outlives the grant’s lease', async () => {
      const { key, store, observer } = await granted('grant-renewed');
      const late = T0 + 10 + GRANT.lifeMs + GRANT.tailMs - 1_000;

      await store.renew(key, label, late, plenty, 'grant');

      expect((await observer.read(key))!.leases.grant).toEqual({ grantedAt: late, expiresAt: late + 45_000 });
      await store.settle(key, label, late + 2_000, plenty, 'grant', { ...window, remaining: 3_999 });
      expect((await observer.read(key))!.leases).toEqual({});
    });
  });
});
