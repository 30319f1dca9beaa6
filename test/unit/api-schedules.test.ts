import { describe, expect, it } from 'vitest';
import { PutSourceBodySchema } from '../../lib/api/schemas/sources.js';
import {
  nextCronTime,
  parseRecurringExpression,
  scheduleExpressionProblem,
} from '../../lib/queue/schedule-expression.js';
import { scheduleName, scheduleNamePrefix } from '../../lib/queue/source-schedules.js';

describe('scheduleExpressionProblem', () => {
  it.each([
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(12 hours)',
    'rate(1 day)',
    'cron(0 3 * * ? *)',
    'cron(0/15 8-17 ? * MON-FRI *)',
  ])('accepts %s', (expression) => {
    expect(scheduleExpressionProblem(expression)).toBeUndefined();
  });

  it.each([
    ['rate(1 hours)', 'singular'],
    ['rate(5 minute)', 'plural'],
    ['rate(0 minutes)', 'at least 1'],
    ['rate(1 week)', 'must be rate'],
    ['at(2030-01-01T00:00:00)', 'must be rate'],
    ['cron(0 3 * * *)', 'six fields'],
    ['cron(0 3 * * * *)', 'exactly one'],
    ['cron(0 3 ? * ? *)', 'exactly one'],
    ['cron(0 3 * * ? $)', 'unsupported character'],
    ['every hour', 'must be rate'],
    ['cron(99 99 * * ? *)', 'not between 0 and 59'],
    ['cron(0 25 * * ? *)', 'not between 0 and 23'],
    ['cron(0 3 ? * 8 *)', 'not between 1 and 7'],
    ['cron(0 3 32 * ? *)', 'not between 1 and 31'],
    ['cron(*/0 * * * ? *)', 'not between 1 and 59'],
    ['cron(0 3 * FOO ? *)', 'not a valid cron expression'],
    ['cron(1.5 * * * ? *)', 'unsupported character'],
    ['cron(0 3 * * ? 2020-2021)', 'never fires again'],
    ['rate(99999999999999999999 minutes)', 'at most one year'],
    ['rate(367 days)', 'at most one year'],
  ])('refuses %s (%s)', (expression, reason) => {
    expect(scheduleExpressionProblem(expression)).toContain(reason);
  });
});

describe('the next time of a cron schedule', () => {
  const at = (iso: string) => Date.parse(iso);
  const cron = (expression: string) => {
    const parsed = parseRecurringExpression(expression, at('2026-12-01T00:00:00Z'));
    if (parsed.kind !== 'cron') throw new Error('not cron');
    return parsed;
  };

  it.each([
    ['cron(0/15 * * * ? *)', '2026-12-01T00:14:30Z', '2026-12-01T00:15:00.000Z'],
    ['cron(0/15 * * * ? *)', '2026-12-01T00:15:00Z', '2026-12-01T00:30:00.000Z'],
    ['cron(0 3 * * ? *)', '2026-12-01T04:00:00Z', '2026-12-02T03:00:00.000Z'],
    ['cron(0 8 ? * MON-FRI *)', '2026-12-04T09:00:00Z', '2026-12-07T08:00:00.000Z'],
    ['cron(0 10 L * ? *)', '2026-12-01T00:00:00Z', '2026-12-31T10:00:00.000Z'],
  ])('%s after %s is %s', (expression, after, next) => {
    expect(new Date(nextCronTime(cron(expression), at(after))!).toISOString()).toBe(next);
  });

  it('is undefined once a year range has passed', () => {
    expect(nextCronTime(cron('cron(0 3 * * ? 2027)'), at('2028-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('schedule names', () => {
  it('are src-<sourceId>-<n>', () => {
    expect(scheduleName('nightly', 0)).toBe('src-nightly-0');
  });

  it('stay within 64 characters for the longest source ids, and stay distinct', () => {
    const a = `a${'b'.repeat(62)}`;
    const b = `a${'b'.repeat(61)}c`;
    expect(scheduleName(a, 9).length).toBeLessThanOrEqual(64);
    expect(scheduleNamePrefix(a)).not.toBe(scheduleNamePrefix(b));
    expect(scheduleName(a, 0)).toMatch(/^[0-9a-zA-Z_.-]+$/);
  });

  it('of one source never start with the prefix of another plus digits only', () => {
    const other = scheduleName('acme-1', 0);
    expect(other.slice(scheduleNamePrefix('acme').length)).not.toMatch(/^\d+$/);
  });
});

describe('the source body schema', () => {
  it('refuses duplicate schedules and more than ten', () => {
    const schedule = { expression: 'rate(1 hour)', mode: 'full' };
    const dup = PutSourceBodySchema.safeParse({
      connector: 'x',
      config: {},
      schedules: [schedule, schedule],
    });
    expect(dup.success).toBe(false);
    const many = PutSourceBodySchema.safeParse({
      connector: 'x',
      config: {},
      schedules: Array.from({ length: 11 }, (_, i) => ({ expression: `rate(${i + 2} hours)`, mode: 'full' })),
    });
    expect(many.success).toBe(false);
  });

  it('defaults schedules to none', () => {
    expect(PutSourceBodySchema.parse({ connector: 'x', config: {} }).schedules).toEqual([]);
  });
});
