import { z } from 'zod';
import { RUN_MODES } from '../../run/model.js';

/**
 * What a source schedule may be: a recurring EventBridge Scheduler expression (`rate(...)` or
 * `cron(...)`, UTC), checked here so a typo is a 400 naming the field, not a Scheduler error
 * half-way through reconciling a source's schedules.
 */

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON_FIELD = /^[0-9A-Za-z*?,/#-]+$/;

/** Why an expression is not a valid recurring Scheduler expression, or undefined when it is. */
export function scheduleExpressionProblem(expression: string): string | undefined {
  const rate = RATE.exec(expression);
  if (rate) {
    const value = Number(rate[1]);
    const plural = rate[2]!.endsWith('s');
    if (value < 1) return 'a rate must be at least 1';
    // Scheduler's own rule: a singular unit for 1, a plural one above.
    if (value === 1 && plural) return 'use a singular unit for 1, e.g. rate(1 hour)';
    if (value > 1 && !plural) return `use a plural unit above 1, e.g. rate(${value} ${rate[2]}s)`;
    return undefined;
  }
  const cron = /^cron\((.+)\)$/.exec(expression);
  if (!cron) return 'must be rate(value unit) or cron(minutes hours day-of-month month day-of-week year)';
  const fields = cron[1]!.trim().split(/\s+/);
  if (fields.length !== 6)
    return 'a cron expression has six fields: minutes hours day-of-month month day-of-week year';
  if (!fields.every((field) => CRON_FIELD.test(field)))
    return 'a cron field contains an unsupported character';
  const [, , dayOfMonth, , dayOfWeek] = fields;
  if ((dayOfMonth === '?') === (dayOfWeek === '?'))
    return 'exactly one of day-of-month and day-of-week must be "?"';
  return undefined;
}

/** A recurring schedule as an administrator gives it; `rate(...)` or `cron(...)`, never one-time `at(...)`. */
export const SourceScheduleSchema = z
  .strictObject({
    expression: z
      .string()
      .max(256)
      .superRefine((value, ctx) => {
        const problem = scheduleExpressionProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .meta({
        description: 'EventBridge Scheduler expression, UTC',
        examples: ['rate(1 hour)', 'cron(0 3 * * ? *)'],
      }),
    mode: z.enum(RUN_MODES).meta({ description: 'Mode of the runs this schedule starts' }),
  })
  .meta({ id: 'SourceSchedule', description: 'A recurring schedule that starts runs of the source' });
