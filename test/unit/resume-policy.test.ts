import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { RUN_MODES, type RunMode } from '../../lib/run/model.js';
import { decideResume, type ResumeInput } from '../../lib/run/resume-policy.js';

const NOW = 1_800_000_000_000;

function input(overrides: Partial<ResumeInput['run']> = {}, rest: Partial<ResumeInput> = {}): ResumeInput {
  return {
    run: {
      mode: 'incremental',
      state: 'running',
      restarts: 0,
      paramsHash: 'h',
      nextPage: 5,
      checkpoint: { cursor: 'c5', page: 4, watermark: null, at: NOW - 60_000 },
      ...overrides,
    },
    orderedByModifiedTime: true,
    currentParamsHash: 'h',
    now: NOW,
    ...rest,
  };
}

describe('decideResume', () => {
  it.each(['incremental', 'full'] as const)(
    'resumes a fresh %s run over an ordered stream with unchanged params',
    (mode) => {
      expect(decideResume(input({ mode }))).toEqual({ action: 'resume', verdict: 'resumed' });
    },
  );

  it.each([
    ['restart_limit', input({ restarts: RELIABILITY.maxRestartsPerRun }), 'fail'],
    ['no_checkpoint', input({ checkpoint: null, nextPage: 1 }), 'restart'],
    ['no_checkpoint', input({ state: 'queued', checkpoint: null, nextPage: 1 }), 'restart'],
    ['params_changed', input({}, { currentParamsHash: 'other' }), 'restart'],
    // Before the first commit too: the restart must adopt the new config, not keep the old one.
    ['params_changed', input({ checkpoint: null, nextPage: 1 }, { currentParamsHash: 'other' }), 'restart'],
    [
      'params_changed',
      input({ state: 'queued', checkpoint: null, nextPage: 1 }, { currentParamsHash: 'o' }),
      'restart',
    ],
    [
      'checkpoint_stale',
      input({
        checkpoint: {
          cursor: 'c',
          page: 4,
          watermark: null,
          at: NOW - RELIABILITY.checkpointFreshnessMs - 1,
        },
      }),
      'restart',
    ],
    ['mode_not_resumable', input({ mode: 'reconciliation' }), 'restart'],
    ['mode_not_resumable', input({ mode: 'dlq_retry' }), 'restart'],
    ['stream_unordered', input({}, { orderedByModifiedTime: false }), 'restart'],
  ] as const)('answers %s', (verdict, given, action) => {
    expect(decideResume(given)).toEqual({ action, verdict });
  });

  it('keeps a checkpoint exactly at the freshness budget', () => {
    const atBudget = input({
      checkpoint: { cursor: 'c', page: 4, watermark: null, at: NOW - RELIABILITY.checkpointFreshnessMs },
    });
    expect(decideResume(atBudget).verdict).toBe('resumed');
  });

  it('only ever resumes full or incremental, ordered, fresh, unchanged runs below the restart limit (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<RunMode>(...RUN_MODES),
        fc.boolean(),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 0, max: 2 * RELIABILITY.checkpointFreshnessMs }),
        fc.boolean(),
        fc.integer({ min: 1, max: 50 }),
        (mode, ordered, restarts, age, sameParams, nextPage) => {
          const decision = decideResume(
            input(
              {
                mode,
                restarts,
                nextPage,
                checkpoint: { cursor: 'c', page: nextPage - 1, watermark: null, at: NOW - age },
              },
              { orderedByModifiedTime: ordered, currentParamsHash: sameParams ? 'h' : 'x' },
            ),
          );
          const resumable =
            (mode === 'incremental' || mode === 'full') &&
            ordered &&
            restarts < RELIABILITY.maxRestartsPerRun &&
            age <= RELIABILITY.checkpointFreshnessMs &&
            sameParams &&
            nextPage > 1;
          expect(decision.action === 'resume').toBe(resumable);
          if (restarts >= RELIABILITY.maxRestartsPerRun) expect(decision.action).toBe('fail');
        },
      ),
    );
  });
});
