import { describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { Handoff } from '../../lib/run/model.js';
import { judgeSilence, lastProgressAt, type SilenceInput } from '../../lib/run/silence.js';

const T = 1_700_000_000_000;
const SILENT = T + RELIABILITY.silenceThresholdMs + 1;

function run(overrides: Partial<SilenceInput> = {}): SilenceInput {
  return { heartbeatAt: T, deferredUntil: null, nextPage: 3, handoff: null, ...overrides };
}
const sent = (page: number, at = T): Handoff => ({ page, at, sentAt: at });

describe('judgeSilence', () => {
  it.each<[string, SilenceInput, number, string]>([
    ['a beat within the threshold is alive', run(), T + RELIABILITY.silenceThresholdMs, 'alive'],
    ['a worker that took its page and went silent is lost', run(), SILENT, 'lost'],
    ['a confirmed successor nobody took yet is waiting', run({ handoff: sent(3) }), SILENT, 'waiting'],
    [
      'a successor waiting minutes in a backlog is still waiting',
      run({ handoff: sent(3) }),
      T + 10 * 60_000,
      'waiting',
    ],
    [
      'a successor whose send was never confirmed is re-sent',
      run({ handoff: { page: 3, at: T, sentAt: null } }),
      SILENT,
      'resend',
    ],
    [
      'a confirmed successor unclaimed past the wait bound is re-sent',
      run({ handoff: sent(3) }),
      T + RELIABILITY.queueWaitResendMs + 1,
      'resend',
    ],
    [
      'a handoff of another page than the expected one does not count',
      run({ handoff: sent(2) }),
      SILENT,
      'lost',
    ],
    ['a pause that has not ended is deferred', run({ deferredUntil: T + 600_000 }), T + 300_000, 'deferred'],
    [
      'a due deferral whose page waits in the queue is waiting',
      run({ deferredUntil: T + 600_000, handoff: sent(3) }),
      T + 600_000 + 120_000,
      'waiting',
    ],
  ])('%s', (_name, input, now, kind) => {
    expect(judgeSilence(input, now).kind).toBe(kind);
  });

  it('leaves an unconfirmed handoff alone while its send may still be in progress', () => {
    const fresh = run({ handoff: { page: 3, at: SILENT - 1_000, sentAt: null } });
    expect(judgeSilence(fresh, SILENT).kind).toBe('waiting');
    expect(judgeSilence(fresh, SILENT + RELIABILITY.sendGraceMs).kind).toBe('resend');
  });

  it('measures a deferred page’s wait from the end of its pause', () => {
    const verdict = judgeSilence(run({ deferredUntil: T + 600_000, handoff: sent(3) }), T + 700_000);
    expect(verdict).toEqual({ kind: 'waiting', since: T + 600_000 });
  });
});

describe('lastProgressAt', () => {
  const base = {
    startedAt: T,
    createdAt: T - 10,
    resume: { reason: 'fresh_start', from: 'scratch', at: T - 10 },
  } as const;

  it('counts from the start for a run on page 1, which has no checkpoint', () => {
    expect(lastProgressAt({ ...base, checkpoint: null, nextPage: 1 })).toBe(T);
  });

  it('counts from the last commit once pages are committed', () => {
    const checkpoint = { cursor: 'c', page: 2, watermark: null, at: T + 5_000 };
    expect(lastProgressAt({ ...base, checkpoint, nextPage: 3 })).toBe(T + 5_000);
  });
});
