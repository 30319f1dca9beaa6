import { describe, expect, it } from 'vitest';
import { scheduleExpressionProblem } from '../../lib/api/schemas/schedules.js';
import { PutSourceBodySchema } from '../../lib/api/schemas/sources.js';
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
  ])('refuses %s (%s)', (expression, reason) => {
    expect(scheduleExpressionProblem(expression)).toContain(reason);
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
