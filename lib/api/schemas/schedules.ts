import { z } from 'zod';
import { scheduleExpressionProblem } from '../../queue/schedule-expression.js';
import { RUN_MODES } from '../../run/model.js';

/**
 * What a source schedule may be: a recurring EventBridge Scheduler expression (`rate(...)` or
 * `cron(...)`, UTC), parsed as Scheduler parses it (lib/queue/schedule-expression.ts) so a typo
 * is a 400 naming the field, not a Scheduler error half-way through writing a source's schedules.
 */

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
