import { z } from 'zod';
import { CompletenessSchema } from '../run/completeness.js';

/**
 * The events Harvester puts on its bus, their detail types and the shape of each detail. The JSON
 * Schemas under docs/events/ are generated from these (scripts/event-schemas.ts) and a test
 * checks both that the files match and that what the code emits parses.
 */

/** `source` of every Harvester event. */
export const EVENT_SOURCE = 'harvester';

/** Detail types on the Harvester bus. */
export const DETAIL_TYPES = {
  runFailed: 'SyncRun Failed',
  /** A run that ended `succeeded` with dead letters; a clean success is {@link DETAIL_TYPES.runSucceeded}. */
  runSucceededWithErrors: 'SyncRun Succeeded With Errors',
  runSucceeded: 'SyncRun Succeeded',
  entityChanged: 'Entity Changed',
  entityTombstoned: 'Entity Tombstoned',
} as const;

const iso = z.iso.datetime();
const epochMs = z.number().nullable();

/** Detail of the three `SyncRun …` events: a run summary a notifier renders without reading a table. */
export const RunEventDetailSchema = z
  .strictObject({
    runId: z.string(),
    sourceId: z.string(),
    mode: z.enum(['full', 'incremental', 'reconciliation', 'dlq_retry']),
    state: z.enum(['succeeded', 'failed', 'cancelled', 'queued', 'running']),
    processed: z.number().int(),
    total: z.number().int().nullable(),
    errorCount: z.number().int(),
    outcome: z
      .strictObject({
        processed: z.number().int(),
        failed: z.number().int(),
        deadLetters: z.number().int().meta({
          description: 'Dead letters the run filed: entries whose last failure was this run when it ended',
        }),
        total: z
          .number()
          .int()
          .nullable()
          .meta({ description: "The source's own total, when it stated one" }),
      })
      .optional()
      .meta({ description: 'What the run ended with, fixed by the write that ended it' }),
    failure: z.strictObject({ reason: z.string(), message: z.string() }).nullable(),
    resume: z.looseObject({ reason: z.string() }),
    startedAt: epochMs.meta({ description: 'Epoch milliseconds' }),
    finishedAt: epochMs.meta({ description: 'Epoch milliseconds' }),
    summary: z.string(),
    link: z.string(),
    completeness: CompletenessSchema.optional().meta({
      description:
        "A succeeded full or reconciliation run's check of the source's count against what was read and stored",
    }),
  })
  .meta({ title: 'SyncRun event detail' });

/**
 * Detail of `Entity Changed` (stored for the first time or with new content) and `Entity
 * Tombstoned` (a reconciliation confirmed it gone). Never the entity's data unless the stack's
 * `changeFeedIncludesData` setting opts in.
 */
export const EntityEventDetailSchema = z
  .strictObject({
    sourceId: z.string(),
    entityId: z.string(),
    version: z.string(),
    changeSequence: z.number().int().nonnegative().meta({
      description:
        "The entity's change number: one more at each change (store, new content, tombstone). Events of one entity may arrive out of order and more than once; the one with the greatest changeSequence is the entity's state, any other is older or a repeat",
    }),
    runId: z.string().meta({ description: 'The run whose write changed or tombstoned it' }),
    changedAt: iso,
    tombstonedAt: iso.nullable(),
    link: z.string().meta({ description: 'The entity in the admin API' }),
    data: z.record(z.string(), z.unknown()).optional().meta({ description: 'Only with the data opt-in' }),
  })
  .meta({ title: 'Entity event detail' });

/** Each detail type's schema, keyed by the file name of its JSON Schema. */
export const DETAIL_SCHEMAS = {
  'sync-run': {
    detailTypes: [DETAIL_TYPES.runFailed, DETAIL_TYPES.runSucceeded, DETAIL_TYPES.runSucceededWithErrors],
    schema: RunEventDetailSchema,
  },
  entity: {
    detailTypes: [DETAIL_TYPES.entityChanged, DETAIL_TYPES.entityTombstoned],
    schema: EntityEventDetailSchema,
  },
} as const;

/** The JSON Schema document of one detail schema, as committed under docs/events/. */
export function detailJsonSchema(name: keyof typeof DETAIL_SCHEMAS): Record<string, unknown> {
  const { detailTypes, schema } = DETAIL_SCHEMAS[name];
  return {
    ...z.toJSONSchema(schema),
    $id: `https://harvester.dev/schemas/events/${name}.schema.json`,
    description: `detail of the ${detailTypes.map((t) => `"${t}"`).join(', ')} events (source "${EVENT_SOURCE}")`,
  };
}
