import { describe, expect, it } from 'vitest';
import type { RunView } from '../../lib/api/schemas/runs.js';
import { outcomeOf } from '../../lib/cli/watch.js';

function run(fields: Partial<RunView>): RunView {
  return {
    runId: 'R1',
    sourceId: 'acme',
    mode: 'full',
    state: 'succeeded',
    durationSeconds: 2,
    failure: null,
    errorCount: 0,
    summary: '10 processed, 0 in DLQ',
    ...fields,
  } as RunView;
}

describe('how a watch ends: the words and the exit code agree', () => {
  it.each([
    ['a succeeded full run', run({}), true, 'run R1 succeeded in 2s: 10 processed, 0 in DLQ'],
    [
      'a retry that recovered everything',
      run({ mode: 'dlq_retry', summary: 'recovered 15, 0 still failing in DLQ' }),
      true,
      'run R1 succeeded in 2s: recovered 15, 0 still failing in DLQ',
    ],
    [
      'a retry with nothing to retry',
      run({ mode: 'dlq_retry', summary: 'nothing to retry: no open dead letters' }),
      true,
      'succeeded',
    ],
    [
      'a retry that recovered some',
      run({ mode: 'dlq_retry', errorCount: 4, summary: 'recovered 3, 4 still failing in DLQ' }),
      false,
      'run R1 finished in 2s but 4 dead letters still fail: recovered 3, 4 still failing in DLQ',
    ],
    [
      'a retry that fixed nothing',
      run({ mode: 'dlq_retry', errorCount: 1, summary: 'fixed nothing: 1 still failing in DLQ' }),
      false,
      'but 1 dead letter still fails: fixed nothing',
    ],
    [
      'a failed run',
      run({ state: 'failed', failure: { reason: 'auth', message: '401' } as RunView['failure'] }),
      false,
      'run R1 failed in 2s: 10 processed, 0 in DLQ (auth: 401)',
    ],
    ['a cancelled run', run({ state: 'cancelled' }), false, 'cancelled'],
  ])('%s', (_name, view, ok, words) => {
    const outcome = outcomeOf(view);
    expect(outcome.ok).toBe(ok);
    expect(outcome.line).toContain(words);
    // "succeeded" is said only when the exit code is 0.
    if (!ok) expect(outcome.line).not.toContain('succeeded');
  });
});
