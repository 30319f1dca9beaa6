import { describe, expect, it } from 'vitest';
import { aheadOfClock, capAtClock } from '../../lib/engine/run/watermark.js';
import { dropReason } from '../../lib/engine/step/message-check.js';
import { laterVersion } from '../../lib/engine/work/page-work.js';
import { parseAtExpression, parseRateExpression } from '../../lib/local/schedule-firer.js';
import { MalformedMessageError, type PageMessage, parsePageMessage } from '../../lib/queue/page-message.js';
import { atExpression, deferralScheduleName, redeliveryDelaySeconds } from '../../lib/queue/page-queue.js';
import type { SyncRun } from '../../lib/run/model.js';

const message: PageMessage = { v: 1, runId: 'r1', sourceId: 's1', epoch: 2, page: 5, cursor: 'c' };

function run(overrides: Partial<SyncRun> = {}): SyncRun {
  return {
    runId: 'r1',
    sourceId: 's1',
    mode: 'full',
    trigger: 'api',
    params: {},
    paramsHash: 'h',
    state: 'running',
    epoch: 2,
    nextPage: 5,
    checkpoint: null,
    progress: { processed: 0, total: null, pages: 4 },
    errorCount: 0,
    heartbeatAt: 0,
    deferredUntil: null,
    handoff: null,
    outboxAt: null,
    restarts: 0,
    resume: { reason: 'fresh_start', from: 'scratch', at: 0 },
    failure: null,
    createdAt: 0,
    startedAt: 0,
    finishedAt: null,
    updatedAt: 0,
    ...overrides,
  };
}

describe('dropReason', () => {
  it('keeps a message that names the run, its epoch and its next page', () => {
    expect(dropReason(run(), message)).toBeUndefined();
  });

  it.each([
    ['run_not_found', undefined],
    ['source_mismatch', run({ sourceId: 'other' })],
    ['run_cancelled', run({ state: 'cancelled' })],
    ['run_succeeded', run({ state: 'succeeded' })],
    ['run_failed', run({ state: 'failed' })],
    ['stale_epoch', run({ epoch: 3 })],
    ['future_epoch', run({ epoch: 1 })],
    ['duplicate_page', run({ nextPage: 6 })],
    ['page_out_of_order', run({ nextPage: 4 })],
  ] as const)('drops with %s', (reason, given) => {
    expect(dropReason(given, message)).toBe(reason);
  });
});

describe('parsePageMessage', () => {
  it('parses a page message', () => {
    expect(parsePageMessage(JSON.stringify(message))).toEqual(message);
  });

  it.each([
    ['not json', 'not JSON'],
    ['{"v":1}', 'runId'],
    [JSON.stringify({ ...message, page: 0 }), 'page'],
    [JSON.stringify({ ...message, extra: true }), 'extra'],
  ])('rejects %s naming the problem', (body, problem) => {
    expect(() => parsePageMessage(body)).toThrow(MalformedMessageError);
    expect(() => parsePageMessage(body)).toThrow(problem);
  });
});

describe('deferral helpers', () => {
  it('names each deferral schedule uniquely within 64 characters', () => {
    const named = { ...message, runId: '01JABCDEFGHJKMNPQRSTVWXYZ0' };
    const name = deferralScheduleName(named, Date.parse('2026-01-02T03:04:05Z'), 'a1b2c3');
    expect(name).toBe(
      `defer-01JABCDEFGHJKMNPQRSTVWXYZ0-e2-p5-${(Date.parse('2026-01-02T03:04:05Z') / 1_000).toString(36)}-a1b2c3`,
    );
    expect(name.length).toBeLessThanOrEqual(64);
    // Two deferrals of the same page to the same instant still get two schedules.
    expect(deferralScheduleName(named, 0)).not.toBe(deferralScheduleName(named, 0));
  });

  it('rounds an at() expression up to the next second and parses it back', () => {
    const at = atExpression(Date.parse('2026-01-02T03:04:05.200Z'));
    expect(at).toBe('at(2026-01-02T03:04:06)');
    expect(parseAtExpression(at)).toBe(Date.parse('2026-01-02T03:04:06Z'));
  });

  it.each([
    ['rate(1 minute)', 60_000],
    ['rate(5 minutes)', 300_000],
    ['rate(2 hours)', 7_200_000],
    ['rate(1 day)', 86_400_000],
    ['cron(0 3 * * ? *)', undefined],
  ])('parses %s', (expression, period) => {
    expect(parseRateExpression(expression)).toBe(period);
  });
});

describe('small policies', () => {
  it('redelivers failed messages after a growing delay capped at 15 minutes', () => {
    expect([1, 2, 3, 4, 5].map(redeliveryDelaySeconds)).toEqual([10, 20, 40, 80, 160]);
    expect(redeliveryDelaySeconds(20)).toBe(900);
  });

  it('keeps the later of two versions', () => {
    expect(laterVersion(null, '2024-01-01T00:00:00.000Z')).toBe('2024-01-01T00:00:00.000Z');
    expect(laterVersion('2024-02-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')).toBe(
      '2024-02-01T00:00:00.000Z',
    );
    expect(laterVersion('2024-01-01T00:00:00.000Z', null)).toBe('2024-01-01T00:00:00.000Z');
  });
});

describe('the watermark and the run clock', () => {
  const ceiling = Date.parse('2024-01-01T00:00:10.500Z');

  it.each([
    ['2024-01-01T02:00:00Z', '2024-01-01T00:00:10Z'],
    // On a whole second (S3 lists times to the second): capped to a whole second, down.
    ['2024-01-01T02:00:00.000Z', '2024-01-01T00:00:10.000Z'],
    ['2024-01-01T02:00:00.250Z', '2024-01-01T00:00:10.500Z'],
    ['2024-01-01T00:00:05Z', '2024-01-01T00:00:05Z'],
    ['17', '17'],
  ])('capAtClock(%s) is %s', (watermark, capped) => {
    expect(capAtClock(watermark, ceiling)).toBe(capped);
  });

  it('aheadOfClock counts the times past the ceiling, never a version that is not a time', () => {
    expect(aheadOfClock(['2024-01-01T00:00:00Z', '2024-01-01T02:00:00Z', '99999'], ceiling)).toBe(1);
  });
});
