import { describe, expect, it } from 'vitest';
import { liveDeadLetters, outcomeFigures, runSummary } from '../../lib/api/run-summary.js';
import { toRunView } from '../../lib/api/views.js';
import { runWords } from '../../lib/cli/commands/source-pause.js';
import { runRow } from '../../lib/cli/output.js';
import { retryFixedNothing } from '../../lib/engine/run/finish.js';
import type { RunOutcome, SyncRun } from '../../lib/run/model.js';
import { withSets } from '../../lib/store/run-outcome.js';

const OUTCOME: RunOutcome = { processed: 485, failed: 15, deadLetters: 15, total: 500 };

const base: SyncRun = {
  runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S',
  sourceId: 's',
  mode: 'full',
  trigger: 'cli',
  params: {},
  paramsHash: 'h',
  state: 'succeeded',
  epoch: 1,
  nextPage: 6,
  checkpoint: null,
  // What the run item says now; the outcome is what it said when the run ended.
  progress: { processed: 485, total: 500, pages: 5 },
  errorCount: 15,
  heartbeatAt: 0,
  deferredUntil: null,
  handoff: null,
  outboxAt: null,
  restarts: 0,
  resume: { reason: 'fresh_start', from: 'scratch', at: 0 },
  failure: null,
  outcome: OUTCOME,
  createdAt: 0,
  startedAt: 1_000,
  finishedAt: 9_000,
  updatedAt: 9_000,
};

describe('an ended run speaks from its fixed outcome', () => {
  it('keeps the source total and the dead letters it filed, the live count beside them', () => {
    expect(runSummary(base, 15)).toBe('485/500 processed, 15 dead letters filed (live: 15 still open)');
    expect(runSummary(base, 3)).toBe(
      "485/500 processed, 15 dead letters filed (live: 3 still open as this run's; 12 since failed again in a later run, resolved or discarded)",
    );
  });

  it('reads the outcome, not the counts of the run item or the live count', () => {
    const drifted = { ...base, progress: { processed: 1, total: 2, pages: 1 }, errorCount: 0 };
    const view = toRunView(drifted, 10_000, 0);
    expect(view.outcome).toEqual({
      processed: 485,
      failed: 15,
      deadLettersFiled: 15,
      sourceTotal: 500,
      fixed: true,
    });
    expect(view.openDeadLetters).toBe(0);
    expect(runRow(view).join(' ')).toContain('485/500 processed, 15 dead letters filed (live: 0 still open');
  });

  it('says the count alone when the source stated no total, or one equal to it', () => {
    expect(runSummary({ ...base, outcome: { ...OUTCOME, total: null } }, 15)).toMatch(/^485 processed,/);
    expect(runSummary({ ...base, outcome: { ...OUTCOME, total: 485 } }, 15)).toMatch(/^485 processed,/);
    expect(runSummary({ ...base, outcome: { ...OUTCOME, deadLetters: 0 } }, 0)).toBe(
      '485/500 processed, 0 dead letters filed',
    );
    expect(runSummary({ ...base, outcome: { ...OUTCOME, deadLetters: 1 } }, 1)).toContain(
      '1 dead letter filed',
    );
  });

  it('labels the figures of a run that ended before outcomes were kept as counted now', () => {
    const { outcome: _, ...legacy } = base;
    expect(runSummary(legacy, 4)).toBe(
      '485 processed, 4 in DLQ (live count: the run ended before outcomes were kept)',
    );
    expect(outcomeFigures(legacy, 4)).toEqual({
      processed: 485,
      failed: 15,
      deadLettersFiled: 4,
      sourceTotal: null,
      fixed: false,
    });
  });

  it('has no outcome while active, and an active summary stays live', () => {
    const running = { ...base, state: 'running' as const, finishedAt: null };
    expect(outcomeFigures(running, 2)).toBeNull();
    expect(toRunView(running, 10_000, 2).outcome).toBeNull();
    expect(runSummary(running, 2)).toBe('485/~500 processed, 2 in DLQ');
  });

  it('a retry says what it fixed from its outcome', () => {
    const retry = { ...base, mode: 'dlq_retry' as const };
    expect(
      runSummary({ ...retry, outcome: { processed: 0, failed: 15, deadLetters: 15, total: null } }, 15),
    ).toBe('fixed nothing: 15 failed again (live: 15 still open)');
    expect(
      runSummary({ ...retry, outcome: { processed: 12, failed: 3, deadLetters: 3, total: null } }, 1),
    ).toBe(
      "recovered 12, 3 failed again (live: 1 still open as this run's; 2 since failed again in a later run, resolved or discarded)",
    );
    expect(
      runSummary({ ...retry, outcome: { processed: 0, failed: 0, deadLetters: 0, total: null } }, 0),
    ).toBe('nothing to retry: no open dead letters');
  });
});

describe('the live count beside the fixed one', () => {
  it.each([
    [0, 0, ''],
    [5, 5, ' (live: 5 still open)'],
    // An entry a straggling worker of the run filed after it ended is open, and this run's.
    [5, 6, ' (live: 6 still open)'],
    [5, 2, " (live: 2 still open as this run's; 3 since failed again in a later run, resolved or discarded)"],
  ])('filed %i, open %i', (filed, open, words) => {
    expect(liveDeadLetters(filed, open)).toBe(words);
  });
});

describe('a retry that fixed nothing', () => {
  const retry = {
    mode: 'dlq_retry' as const,
    errorCount: 3,
    progress: { processed: 0, total: null, pages: 1 },
  };
  it.each([
    ['every entry failed again', retry, true],
    ['one stored', { ...retry, progress: { ...retry.progress, processed: 1 } }, false],
    ['one gone from the source', { ...retry, progress: { ...retry.progress, gone: 1 } }, false],
    ['nothing to retry', { ...retry, errorCount: 0 }, false],
    ['a full run', { ...retry, mode: 'full' as const }, false],
  ])('%s: %s', (_label, run, fixedNothing) => {
    expect(retryFixedNothing(run)).toBe(fixedNothing);
  });
});

describe("sources get's last runs", () => {
  it('shows the fixed figures, the source total kept', () => {
    const last = {
      runId: 'R1',
      mode: 'full' as const,
      state: 'succeeded' as const,
      createdAt: '2026-12-07T00:00:00.000Z',
      finishedAt: '2026-12-07T00:01:00.000Z',
      outcome: { processed: 485, failed: 15, deadLettersFiled: 15, sourceTotal: 500, fixed: true },
    };
    expect(runWords(last)).toBe(
      'R1 succeeded (full) 2026-12-07T00:01:00.000Z: 485/500 processed, 15 dead letters filed',
    );
    expect(runWords({ ...last, outcome: null })).toBe('R1 succeeded (full) 2026-12-07T00:01:00.000Z');
  });
});

describe('the end adds the outcome to the SET clause', () => {
  it.each([
    ['SET a = :a', ', o = :o', 'SET a = :a, o = :o'],
    ['SET a = :a REMOVE b', ', o = :o', 'SET a = :a, o = :o REMOVE b'],
  ])('%s + %s', (update, sets, expected) => {
    expect(withSets(update, sets)).toBe(expected);
  });
});
