import awsCron from 'aws-cron-parser';

/**
 * Recurring EventBridge Scheduler expressions — `rate(value unit)` and
 * `cron(minutes hours day-of-month month day-of-week year)`, UTC — parsed the way Scheduler
 * reads them, so that an expression Scheduler would refuse (or one that never fires) is a 400
 * naming the field instead of a Scheduler error half-way through writing a source's schedules,
 * and so the local runtime can fire `cron(...)` schedules as Scheduler would.
 *
 * The cron fields are parsed by `aws-cron-parser` (ranges, names, `L`, `W`, `#`, steps, and the
 * next occurrence); the checks it leaves to AWS (six fields, exactly one of day-of-month and
 * day-of-week is `?`, the characters allowed) are made here first.
 */

/** Longest `rate(...)` period accepted: one year. Longer ones are typos, not schedules. */
export const MAX_RATE_MS = 366 * 86_400_000;

const RATE_UNITS: Record<string, number> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** A parsed recurring expression: a fixed period, or a cron calendar. */
export type RecurringExpression =
  | { readonly kind: 'rate'; readonly periodMs: number }
  | { readonly kind: 'cron'; readonly cron: ReturnType<typeof awsCron.parse> };

/** Why an expression is not a valid recurring Scheduler expression: the message a 400 shows. */
export class ScheduleExpressionError extends Error {
  override readonly name = 'ScheduleExpressionError';
}

const CRON_FIELD = /^[0-9A-Za-z*?,/#-]+$/;
const CRON_FIELD_NAMES = ['minutes', 'hours', 'day-of-month', 'month', 'day-of-week', 'year'];

function parseRate(value: string, unit: string): RecurringExpression {
  if (!/^\d+$/.test(value))
    throw new ScheduleExpressionError('a rate is a whole number of minutes, hours or days');
  const amount = Number(value);
  const plural = unit.endsWith('s');
  if (amount < 1) throw new ScheduleExpressionError('a rate must be at least 1');
  // Scheduler's own rule: a singular unit for 1, a plural one above.
  if (amount === 1 && plural)
    throw new ScheduleExpressionError('use a singular unit for 1, e.g. rate(1 hour)');
  if (amount > 1 && !plural)
    throw new ScheduleExpressionError(`use a plural unit above 1, e.g. rate(${value} ${unit}s)`);
  const periodMs = amount * RATE_UNITS[unit]!;
  if (!Number.isSafeInteger(amount) || periodMs > MAX_RATE_MS)
    throw new ScheduleExpressionError('a rate may be at most one year (366 days)');
  return { kind: 'rate', periodMs };
}

function parseCron(body: string, now: number): RecurringExpression {
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6)
    throw new ScheduleExpressionError(
      'a cron expression has six fields: minutes hours day-of-month month day-of-week year',
    );
  for (const [index, field] of fields.entries()) {
    if (!CRON_FIELD.test(field))
      throw new ScheduleExpressionError(
        `the ${CRON_FIELD_NAMES[index]} field contains an unsupported character`,
      );
  }
  const [, , dayOfMonth, , dayOfWeek] = fields;
  if ((dayOfMonth === '?') === (dayOfWeek === '?'))
    throw new ScheduleExpressionError('exactly one of day-of-month and day-of-week must be "?"');
  let cron: ReturnType<typeof awsCron.parse>;
  let next: Date | null;
  try {
    cron = awsCron.parse(fields.join(' '));
    const values = Object.values(cron) as unknown[][];
    if (values.some((list) => list.some((v) => v === null || (typeof v === 'number' && Number.isNaN(v)))))
      throw new Error('a field is not a number, name or range');
    next = awsCron.next(cron, new Date(now));
  } catch (error) {
    const message = (error as Error).message;
    throw new ScheduleExpressionError(
      message.startsWith('Invalid: ')
        ? `not a valid cron expression: ${message.slice('Invalid: '.length)}`
        : 'not a valid cron expression: a field is not a number, name, range or step Scheduler accepts',
    );
  }
  if (!next) throw new ScheduleExpressionError('this cron expression never fires again');
  return { kind: 'cron', cron };
}

/**
 * Parses a recurring Scheduler expression; throws {@link ScheduleExpressionError} saying why it
 * is not one. `now` matters only for "never fires again" (a year range in the past).
 *
 * @example
 * parseRecurringExpression('cron(0 3 * * ? *)'); // { kind: 'cron', ... }
 * parseRecurringExpression('rate(99999999999999999999 minutes)'); // throws: at most one year
 */
export function parseRecurringExpression(expression: string, now: number = Date.now()): RecurringExpression {
  const rate = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(expression);
  if (rate) return parseRate(rate[1]!, rate[2]!);
  const cron = /^cron\((.+)\)$/.exec(expression);
  if (cron) return parseCron(cron[1]!, now);
  throw new ScheduleExpressionError(
    'must be rate(value unit) or cron(minutes hours day-of-month month day-of-week year)',
  );
}

/** Why an expression is not a valid recurring Scheduler expression, or undefined when it is. */
export function scheduleExpressionProblem(expression: string, now: number = Date.now()): string | undefined {
  try {
    parseRecurringExpression(expression, now);
    return undefined;
  } catch (error) {
    if (error instanceof ScheduleExpressionError) return error.message;
    throw error;
  }
}

/** The first time a cron expression fires strictly after `after` (epoch ms), or undefined if never. */
export function nextCronTime(
  expression: RecurringExpression & { kind: 'cron' },
  after: number,
): number | undefined {
  // The parser works in whole minutes and may answer `after` itself when it falls on a minute.
  const next = awsCron.next(expression.cron, new Date(after + 1));
  if (!next) return undefined;
  return next.getTime() > after ? next.getTime() : undefined;
}

/**
 * When a recurring expression fires next after `now` (epoch ms), as Scheduler runs it in UTC:
 * a `cron(...)` at its next calendar time; a `rate(...)` every period counted from `since` (when
 * the schedule was created or last changed). Undefined when it never fires again or is not a
 * recurring expression.
 *
 * @example
 * nextFireTime('rate(1 hour)', { now: Date.parse('2026-01-01T10:30:00Z'), since: Date.parse('2026-01-01T09:00:00Z') });
 * // → 2026-01-01T11:00:00Z
 */
export function nextFireTime(expression: string, at: { now: number; since: number }): number | undefined {
  let parsed: RecurringExpression;
  try {
    parsed = parseRecurringExpression(expression, at.now);
  } catch {
    return undefined;
  }
  if (parsed.kind === 'cron') return nextCronTime(parsed, at.now);
  const since = Math.min(at.since, at.now);
  const periods = Math.floor((at.now - since) / parsed.periodMs) + 1;
  return since + periods * parsed.periodMs;
}
