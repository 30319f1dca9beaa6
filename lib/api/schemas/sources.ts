import { z } from 'zod';
import { CONNECTOR_NAMES } from '../../connectors/registry.js';
import { MAX_SCHEDULES_PER_SOURCE } from '../../queue/source-schedules.js';
import { RUN_MODES, RUN_STATES } from '../../run/model.js';
import { IsoTimeSchema, PageQuerySchema, pageSchema, RunIdSchema, SourceIdSchema } from './common.js';
import { RunOutcomeViewSchema } from './runs.js';
import { SourceScheduleSchema } from './schedules.js';

/** `/sources/{sourceId}` path parameters. */
export const SourcePathSchema = z.strictObject({ sourceId: SourceIdSchema });

/** A source's recurring schedules, replaced as a whole. */
export const SchedulesSchema = z
  .array(SourceScheduleSchema)
  // Counted here rather than with .max(): zod runs a length check on a string too, and
  // `schedules: "rate(1 hour)"` then also read "expected string to have <=10 characters".
  .superRefine((schedules, ctx) => {
    if (schedules.length > MAX_SCHEDULES_PER_SOURCE)
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_SCHEDULES_PER_SOURCE} schedules per source` });
    const seen = new Set<string>();
    for (const [index, s] of schedules.entries()) {
      const key = `${s.expression}|${s.mode}`;
      if (seen.has(key))
        ctx.addIssue({ code: 'custom', path: [index], message: 'duplicates an earlier schedule' });
      seen.add(key);
    }
  })
  .meta({
    description: `Recurring schedules, at most ${MAX_SCHEDULES_PER_SOURCE}; replaces the current set`,
  });

/**
 * Body of `PUT /sources/{sourceId}`: the whole definition (schedules omitted means none). The
 * config is checked here only for being an object; the connector's own schema validates it next,
 * so its errors name the connector's fields (`config.pagination.cursorParam`).
 */
export const PutSourceBodySchema = z
  .strictObject({
    connector: z
      .string()
      .min(1)
      .max(64)
      .meta({ description: 'Registry name of the connector', override: { enum: [...CONNECTOR_NAMES] } }),
    config: z.record(z.string(), z.unknown()).meta({
      description:
        "The connector's config, validated by its schema. Secrets are references only (`tokenRef`, `auth.secretRef`: an SSM parameter or Secrets Manager name), so configs are returned as stored.",
      override: {
        oneOf: CONNECTOR_NAMES.map((name) => ({ $ref: `#/components/schemas/${connectorConfigId(name)}` })),
      },
    }),
    schedules: SchedulesSchema.default([]),
  })
  .meta({ id: 'PutSourceRequest' });

/** OpenAPI component id of a connector's config schema (`rest-json` → `RestJsonConfig`). */
export function connectorConfigId(name: string): string {
  return `${name.replace(/(^|-)([a-z])/g, (_, _dash: string, c: string) => c.toUpperCase())}Config`;
}

/** Body of `PUT /sources/{sourceId}/schedules`: the schedules alone, the config untouched. */
export const PutSchedulesBodySchema = z
  .strictObject({ schedules: SchedulesSchema.meta({ description: 'The new set; `[]` removes them all' }) })
  .meta({ id: 'PutSchedulesRequest' });

/** A run as a source's history shows it. */
export const RunSummarySchema = z
  .object({
    runId: RunIdSchema,
    state: z.enum(RUN_STATES),
    mode: z.enum(RUN_MODES),
    createdAt: IsoTimeSchema,
    finishedAt: IsoTimeSchema.nullable(),
    outcome: RunOutcomeViewSchema.nullable().optional().meta({
      description:
        'What the run ended with, fixed when it ended; null while active or for a run that ended before outcomes were kept',
    }),
  })
  .meta({ id: 'RunSummary' });

/** A source as the API returns it. */
export const SourceViewSchema = z
  .object({
    sourceId: SourceIdSchema,
    connector: z.string(),
    config: z
      .record(z.string(), z.unknown())
      .meta({ description: 'As validated, defaults applied; secrets are references' }),
    schedules: z.array(
      z.object({
        name: z.string().meta({ description: 'EventBridge Scheduler schedule name' }),
        expression: z.string(),
        mode: z.enum(RUN_MODES),
        state: z
          .enum(['ENABLED', 'DISABLED', 'MISSING'])
          .optional()
          .meta({ description: 'What Scheduler holds: DISABLED while the source is paused' }),
        nextFireAt: IsoTimeSchema.nullable()
          .optional()
          .meta({ description: 'When it fires next (UTC); null while paused or if it never fires again' }),
      }),
    ),
    paused: z.boolean().meta({ description: 'Schedules paused (`sources pause`): none of them fires' }),
    pausedAt: IsoTimeSchema.nullable(),
    lastRun: RunSummarySchema.nullable()
      .optional()
      .meta({ description: 'The newest run, whatever its state; null when the source never ran' }),
    lastSuccess: RunSummarySchema.nullable().optional().meta({
      description: 'The newest run that succeeded, among the source’s last 100; null when none did',
    }),
    configHash: z
      .string()
      .meta({ description: 'Hash of connector + config; a change makes interrupted runs restart' }),
    watermark: z.string().nullable().meta({ description: 'Committed incremental watermark' }),
    activeRunId: RunIdSchema.nullable().meta({ description: 'The run holding the source, if any' }),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  })
  .meta({ id: 'Source' });

/** What `DELETE /sources/{sourceId}` removed with the source. */
export const DeletedSourceSchema = z
  .object({
    sourceId: SourceIdSchema,
    deleted: z.object({
      schedules: z.number().int(),
      runs: z.number().int(),
      deadLetters: z.number().int(),
    }),
    itemsKept: z.literal(true).meta({ description: 'Harvested items are never deleted with a source' }),
  })
  .meta({ id: 'DeletedSource' });

/** A page of sources. */
export const SourcePageSchema = pageSchema(SourceViewSchema, 'SourcePage');
/** Query of `GET /sources`. */
export const ListSourcesQuerySchema = PageQuerySchema;
