import { z } from 'zod';
import { ERROR_CLASSES } from '../../retry/errors.js';
import { DEAD_LETTER_KINDS, DEAD_LETTER_STATES } from '../../store/dead-letter-kinds.js';
import { IsoTimeSchema, pageQueryShape, pageSchema, RunIdSchema, SourceIdSchema } from './common.js';

/** What `state` a listing asks for: the open entries (default) or the discarded ones. */
export const LISTED_DEAD_LETTER_STATES = ['open', ...DEAD_LETTER_STATES] as const;

/** `reasonMatch`: a substring of the failure reason, as typed (case-sensitive). */
const ReasonMatchSchema = z.string().min(1).max(200).meta({
  description: 'Only entries whose failure reason contains this text (case-sensitive)',
  example: 'HTTP 404',
});

/** Query of `GET /sources/{sourceId}/dead-letters`. */
export const ListDeadLettersQuerySchema = z.strictObject({
  runId: RunIdSchema.optional().meta({ description: 'Only entries whose last failure was in this run' }),
  errorClass: z.enum(ERROR_CLASSES).optional(),
  reasonMatch: ReasonMatchSchema.optional(),
  state: z.enum(LISTED_DEAD_LETTER_STATES).default('open').meta({
    description: '`open` (default): what is still wrong; `discarded`: the audit trail of given-up entries',
  }),
  ...pageQueryShape,
});

/** Who discarded an entry, when and why. */
export const DiscardViewSchema = z
  .object({
    at: IsoTimeSchema,
    by: z
      .string()
      .nullable()
      .meta({ description: "The caller's IAM identity (ARN); null when the API has none" }),
    reason: z.string(),
  })
  .meta({ id: 'DeadLetterDiscard' });

/** A dead_letters entry as listed: the failure, and for a discarded one who gave up on it, when and why. */
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
    state: z.enum(LISTED_DEAD_LETTER_STATES),
    discard: DiscardViewSchema.nullable().meta({
      description:
        'The last discard (kept when a new failure opens the entry again); null if never discarded',
    }),
  })
  .meta({ id: 'DeadLetter' });

/** A page of dead letters. */
export const DeadLetterPageSchema = pageSchema(DeadLetterViewSchema, 'DeadLetterPage');

/** Path of one dead letter: its `entryId` as listed (`item#<entity id>`, `page#<cursor or hash>`), URL-encoded. */
export const DeadLetterPathSchema = z.strictObject({
  sourceId: SourceIdSchema,
  entryId: z
    .string()
    .regex(/^(item|page)#.+$/, 'must be an entry id as dlq list shows it: item#<entity id> or page#<cursor>')
    .max(1024)
    .meta({ description: 'The entry id as listed, URL-encoded', example: 'item#e-000042' }),
});

const DiscardReasonSchema = z.string().trim().min(1, 'say why the entry is given up on').max(1000).meta({
  description: 'Why the entry is given up on; kept with the entry',
  example: 'record deleted upstream',
});

/** Body of `POST …/dead-letters/{entryId}/discard`. */
export const DiscardBodySchema = z.strictObject({ reason: DiscardReasonSchema });

/**
 * Which open entries a bulk discard means. At least one criterion: an empty filter is refused
 * rather than read as "everything", which must be asked for as `all: true` (and alone).
 */
export const DeadLetterFilterSchema = z
  .strictObject({
    runId: RunIdSchema.optional().meta({ description: 'Entries whose last failure was in this run' }),
    errorClass: z.enum(ERROR_CLASSES).optional().meta({ description: 'Entries of this error class' }),
    reasonMatch: ReasonMatchSchema.optional(),
    all: z.literal(true).optional().meta({ description: 'Every open entry of the source (alone)' }),
  })
  .superRefine((filter, ctx) => {
    const narrowed =
      filter.runId !== undefined || filter.errorClass !== undefined || filter.reasonMatch !== undefined;
    if (!narrowed && filter.all === undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'name at least one of runId, errorClass, reasonMatch, or all: true for every open entry',
      });
    if (narrowed && filter.all !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['all'],
        message: 'all: true means every open entry: give it alone, or drop it and keep the other criteria',
      });
  })
  .meta({
    id: 'DeadLetterFilter',
    description:
      'Which open dead letters: `runId`, `errorClass` and `reasonMatch` combine (each narrows); `all: true` stands alone for every open entry. An empty filter is a 400, never read as everything',
  });

/** Body of `POST /sources/{sourceId}/dead-letters/discard`. */
export const BulkDiscardBodySchema = z.strictObject({
  filter: DeadLetterFilterSchema,
  reason: DiscardReasonSchema,
  dryRun: z.boolean().default(false).meta({
    description: 'Only count the matching open entries (`matched`), discarding nothing',
  }),
  cursor: z.string().min(1).max(4096).optional().meta({
    description: 'The `nextCursor` of the previous call with the same filter (and `dryRun`)',
  }),
});

/** Body of `POST /sources/{sourceId}/dead-letters/retry`: optional, as is its filter (none: every open entry). */
export const RetryDeadLettersBodySchema = z
  .strictObject({
    filter: DeadLetterFilterSchema.optional().meta({
      description: 'Retry only the open entries matching it; absent (or `all: true`): every open entry',
    }),
  })
  .optional()
  .meta({ id: 'RetryDeadLettersRequest' });

/** What one bulk-discard call did. */
export const BulkDiscardResultSchema = z
  .object({
    dryRun: z.boolean(),
    matched: z.number().int().meta({ description: 'Open entries this call found matching the filter' }),
    discarded: z.number().int().meta({ description: 'Of them, discarded by this call (0 on a dry run)' }),
    skipped: z.number().int().meta({
      description:
        'Of them, left alone: discarded, resolved or failed again differently between the read and the write',
    }),
    nextCursor: z.string().nullable().meta({
      description: 'More entries may match: call again with this `cursor`; null when the filter is done',
    }),
  })
  .meta({ id: 'BulkDiscardResult' });

/** One event of a dead letter's history, oldest first. */
export const DeadLetterEventSchema = z
  .object({
    at: IsoTimeSchema,
    event: z.enum(['first_failure', 'last_failure', 'discarded']),
    runId: RunIdSchema.optional(),
    page: z.number().int().optional(),
    by: z.string().nullable().optional(),
    reason: z.string().optional(),
  })
  .meta({ id: 'DeadLetterEvent' });

/** One dead letter in full: the listing's fields, its state, the record as stored, its history. */
export const DeadLetterDetailSchema = DeadLetterViewSchema.extend({
  record: z.unknown().meta({
    description:
      'The failed payload parsed as JSON, numbers exact; null when none was kept, it was cut to its excerpt, or it is not JSON',
  }),
  history: z.array(DeadLetterEventSchema),
}).meta({ id: 'DeadLetterDetail' });
