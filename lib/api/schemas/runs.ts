import { z } from 'zod';
import { ERROR_CLASSES } from '../../retry/errors.js';
import { CompletenessSchema } from '../../run/completeness.js';
import { PARTITION_STATES, RESUME_VERDICTS, RUN_MODES, RUN_STATES } from '../../run/model.js';
import { MAX_PARTITIONS_LIMIT } from '../../run/partitions.js';
import { MAX_RUN_EVENTS, RunEventSchema } from '../../run/run-events.js';
import {
  IsoTimeSchema,
  PageQuerySchema,
  pageQueryShape,
  pageSchema,
  RunIdSchema,
  SourceIdSchema,
} from './common.js';

/** `/runs/{runId}` path parameters (the administrators' routes across sources). */
export const RunPathSchema = z.strictObject({ runId: RunIdSchema });

/** `/sources/{sourceId}/runs/{runId}` path parameters. */
export const SourceRunPathSchema = z.strictObject({ sourceId: SourceIdSchema, runId: RunIdSchema });

/** Body of `POST /sources/{sourceId}/runs`. */
export const StartRunBodySchema = z
  .strictObject({
    mode: z.enum(RUN_MODES).meta({
      description:
        '`full` reads everything, `incremental` what changed since the watermark, `reconciliation` the id catalog to tombstone deleted entities, `dlq_retry` the open dead letters (see the README, "Modes")',
    }),
    partitions: z.number().int().min(1).max(MAX_PARTITIONS_LIMIT).optional().meta({
      description:
        'Most partitions the run may be split into (default: the stack setting `MAX_PARTITIONS_PER_RUN`, 8); 1 reads one ordered stream. Only `full` and first `incremental` runs over a connector that can plan windows are split, and only as far as the data makes it worthwhile (see the README, "Partitioned runs")',
      example: 8,
    }),
  })
  .meta({ id: 'StartRunRequest' });

/** Optional empty body of the action routes (cancel, retry): `{}` or nothing. */
export const EmptyBodySchema = z.strictObject({}).optional().meta({ id: 'EmptyRequest' });

/** One partition of a partitioned run, as the run view lists it. */
export const PartitionViewSchema = z
  .object({
    index: z.number().int(),
    window: z.object({ from: z.string().nullable(), until: z.string().nullable() }).meta({
      description: 'The window of modification time `[from, until)` it reads; null bounds are open',
    }),
    state: z.enum(PARTITION_STATES).meta({
      description:
        '`running`; `idle`: the open last window reached the end of the stream and reads the tail once the others are done; `done`',
    }),
    processed: z.number().int(),
    pages: z.number().int(),
    errorCount: z.number().int(),
    nextPage: z
      .number()
      .int()
      .meta({ description: "Sequence number of the partition's next page (its own chain)" }),
    checkpoint: z
      .object({ page: z.number().int(), watermark: z.string().nullable(), at: IsoTimeSchema })
      .nullable()
      .meta({ description: 'Its last committed page' }),
    heartbeatAt: IsoTimeSchema.nullable().meta({
      description: 'Last sign of life of its worker; null unless running',
    }),
    deferredUntil: IsoTimeSchema.nullable(),
    waitingSince: IsoTimeSchema.nullable().meta({
      description: 'Its next page has waited in the queue for a worker since then (waiting, not crashed)',
    }),
    tailFrom: z.string().nullable().meta({
      description:
        'The open window reads its tail from this modification time (set once the others were done)',
    }),
  })
  .meta({ id: 'Partition' });

/** An ended run's outcome: the figures fixed when it ended, which its history reads. */
export const RunOutcomeViewSchema = z
  .object({
    processed: z.number().int().meta({ description: 'Entities stored' }),
    failed: z
      .number()
      .int()
      .meta({ description: 'Failures its page commits recorded (`errorCount` at the end)' }),
    deadLettersFiled: z.number().int().meta({
      description:
        'Dead letters the run filed: the entries whose last failure was this run when it ended. Fixed: a later run that fails the same entries again does not change it (`openDeadLetters` is the live count beside it)',
    }),
    sourceTotal: z.number().int().nullable().meta({
      description: "The source's own total when it stated one (never the run's own count); null otherwise",
    }),
    fixed: z.boolean().meta({
      description:
        'true: written by the write that ended the run. false: the run ended before outcomes were kept, and these figures are counted now (`deadLettersFiled` is then the live open count)',
    }),
  })
  .meta({ id: 'RunOutcome' });

/** A run as the API returns it: what an operator needs to judge it at a glance. */
export const RunViewSchema = z
  .object({
    runId: RunIdSchema,
    sourceId: SourceIdSchema,
    mode: z.enum(RUN_MODES),
    state: z.enum(RUN_STATES),
    trigger: z.string().meta({
      description:
        'Who started the run: `api`, `cli` or `schedule:<name>` (the reaper re-arms runs; see `resume`)',
      example: 'schedule:src-acme-0',
    }),
    progress: z.object({
      processed: z.number().int(),
      total: z.number().int().nullable().meta({
        description:
          "The source's own count when it tells (null otherwise); an estimate while the run is active",
      }),
      totalIsEstimate: z.boolean(),
      pages: z.number().int(),
      ahead: z.number().int().optional().meta({
        description:
          "Records read with a modification time past the run's start (a source host's clock running ahead): stored, but never the watermark. Absent when none",
      }),
    }),
    errorCount: z.number().int().meta({ description: 'Failures this run recorded at its page commits' }),
    openDeadLetters: z.number().int().meta({
      description:
        "K, live: open dead letters (items and pages) whose last failure is this run now — what `GET /sources/{id}/dead-letters?runId=` lists. A later run that fails them again takes them over; the ended run's `outcome.deadLettersFiled` stays",
    }),
    outcome: RunOutcomeViewSchema.nullable().meta({
      description: 'What the run ended with, fixed when it ended; null while it is active',
    }),
    tombstoned: z.number().int().optional().meta({ description: 'Reconciliation: entities tombstoned' }),
    summary: z.string().meta({
      description:
        'Active: "1990/~2000 processed, 10 in DLQ". Ended: the fixed outcome with the live count beside it, "485/500 processed, 15 dead letters filed (live: 3 still open as this run\'s; …)"',
      example: '1990/~2000 processed, 10 in DLQ',
    }),
    verdict: z.string().meta({ description: 'The `resume` reason in plain words' }),
    durationSeconds: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'From start to end (or to now while active); null before it starts' }),
    heartbeatAt: IsoTimeSchema.nullable().meta({ description: 'Last sign of life; null unless running' }),
    heartbeatAgeSeconds: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Seconds since the last sign of life; null unless running' }),
    checkpoint: z
      .object({
        cursor: z.string().nullable(),
        page: z.number().int(),
        watermark: z.string().nullable(),
        at: IsoTimeSchema,
      })
      .nullable(),
    resume: z
      .object({
        reason: z.enum(RESUME_VERDICTS),
        from: z.enum(['checkpoint', 'scratch', 'none']),
        at: IsoTimeSchema,
      })
      .meta({ description: 'Why the run (re)started where it did' }),
    failure: z.object({ reason: z.string(), message: z.string() }).nullable(),
    epoch: z.number().int().meta({ description: 'Fencing token; grows with every restart' }),
    nextPage: z.number().int(),
    restarts: z.number().int(),
    deferredUntil: IsoTimeSchema.nullable().meta({ description: 'A planned pause (rate limit) ends then' }),
    waitingSince: IsoTimeSchema.nullable().meta({
      description: 'The next page has waited in the queue for a worker since then (waiting, not crashed)',
    }),
    partitions: z.array(PartitionViewSchema).optional().meta({
      description:
        'A partitioned run: its partitions in index order, each a window read as its own stream. `progress`, `errorCount` and the verdict are the run’s aggregates',
    }),
    completeness: CompletenessSchema.optional().meta({
      description:
        'A succeeded full or reconciliation run: the source’s count against what the run read and what the store holds for the source, counted in the store when the run ended (`verified`, or `short` by how many and why)',
    }),
    deadLetterFilter: z
      .object({
        runId: RunIdSchema.optional(),
        errorClass: z.enum(ERROR_CLASSES).optional(),
        reasonMatch: z.string().optional(),
      })
      .optional()
      .meta({
        description:
          'A `dlq_retry` run started with a filter: only the open dead letters matching it are retried. Absent: all of them',
      }),
    createdAt: IsoTimeSchema,
    startedAt: IsoTimeSchema.nullable(),
    finishedAt: IsoTimeSchema.nullable(),
    updatedAt: IsoTimeSchema,
  })
  .meta({ id: 'Run' });

/** A partition as the API returns it. */
export type PartitionView = z.infer<typeof PartitionViewSchema>;

/** A run as the API returns it (the CLI reads this type too). */
export type RunView = z.infer<typeof RunViewSchema>;

/** A page of runs, newest first. */
export const RunPageSchema = pageSchema(RunViewSchema, 'RunPage');
/** Query of `GET /sources/{sourceId}/runs/{runId}/events`: a page of the run's story. */
export const RunEventsQuerySchema = z.strictObject({
  ...pageQueryShape,
  limit: pageQueryShape.limit.default(100).meta({ description: 'Events per page, 1–100. Default 100.' }),
});

/** A page of a run's story, oldest first. */
export const RunEventPageSchema = z
  .object({
    items: z.array(RunEventSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null at the end' }),
    dropped: z
      .number()
      .int()
      .min(0)
      .meta({
        description: `Events the run could not keep: its story holds at most ${MAX_RUN_EVENTS}, the last place kept for \`ended\``,
      }),
  })
  .meta({ id: 'RunEventPage' });

/** Query of `GET /sources/{sourceId}/runs`. */
export const ListRunsQuerySchema = PageQuerySchema;
/** Query of `GET /runs`: every source's runs, optionally in one state. */
export const ListAllRunsQuerySchema = z.strictObject({
  ...pageQueryShape,
  state: z.enum(RUN_STATES).optional().meta({ description: 'Only runs in this state' }),
});
