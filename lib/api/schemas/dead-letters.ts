import { z } from 'zod';
import { ERROR_CLASSES } from '../../retry/errors.js';
import { DEAD_LETTER_KINDS } from '../../store/dead-letters.js';
import { IsoTimeSchema, pageQueryShape, pageSchema, RunIdSchema, SourceIdSchema } from './common.js';

/** Query of `GET /sources/{sourceId}/dead-letters`. */
export const ListDeadLettersQuerySchema = z.strictObject({
  runId: RunIdSchema.optional().meta({ description: 'Only entries whose last failure was in this run' }),
  errorClass: z.enum(ERROR_CLASSES).optional(),
  ...pageQueryShape,
});

/** An open dead_letters entry. */
export const DeadLetterViewSchema = z
  .object({
    sourceId: SourceIdSchema,
    entryId: z.string(),
    kind: z.enum(DEAD_LETTER_KINDS),
    ref: z.string().meta({ description: 'Entity id (items) or page cursor (pages)' }),
    errorClass: z.enum(ERROR_CLASSES),
    reason: z.string(),
    attempts: z.number().int(),
    firstFailedAt: IsoTimeSchema,
    lastFailedAt: IsoTimeSchema,
    runId: RunIdSchema.meta({ description: 'Run of the last failure' }),
    page: z.number().int(),
    excerpt: z.string().nullable().meta({ description: 'Bounded excerpt of the failed payload' }),
  })
  .meta({ id: 'DeadLetter' });

/** A page of dead letters. */
export const DeadLetterPageSchema = pageSchema(DeadLetterViewSchema, 'DeadLetterPage');
