import { z } from 'zod';
import { RUN_MODES } from '../../run/model.js';
import { IsoTimeSchema, pageQueryShape, RunIdSchema, SourceIdSchema } from './common.js';
import { DeadLetterViewSchema, DiscardViewSchema } from './dead-letters.js';

/** An entity id as the source names it (percent-encode `/` and other reserved characters in a path). */
export const EntityIdSchema = z
  .string()
  .min(1)
  .max(1024)
  .meta({ description: "The source's id of the entity", example: '1347' });

/** `/sources/{sourceId}/items/{entityId}` path parameters. */
export const ItemPathSchema = z.strictObject({ sourceId: SourceIdSchema, entityId: EntityIdSchema });

const flag = z
  .enum(['true', 'false'])
  .transform((value) => value === 'true')
  .optional();

/** Query of `GET /sources/{sourceId}/items`. */
export const ListItemsQuerySchema = z.strictObject({
  changedSince: z.iso.datetime({ offset: true }).optional().meta({
    description:
      'Only entities stored with new content or tombstoned at or after this time, oldest change first: a change feed. Poll again from the `nextChangedSince` of the last page (docs/items.md).',
    example: '2025-05-01T10:00:00Z',
  }),
  includeTombstoned: flag.meta({
    description:
      'Include tombstoned entities. Default: false; true with `changedSince` (a feed reports deletions).',
  }),
  ...pageQueryShape,
});

/** Where a stored version came from. */
export const ProvenanceSchema = z
  .object({
    runId: RunIdSchema.meta({ description: 'The run that wrote the stored version' }),
    mode: z.enum(RUN_MODES).nullable(),
    page: z.number().int().nullable().meta({ description: "The page of the run's chain that delivered it" }),
    window: z
      .object({ from: z.string().nullable(), until: z.string().nullable() })
      .nullable()
      .meta({ description: 'The partition window of a partitioned run; null otherwise' }),
    fetchedAt: IsoTimeSchema.nullable().meta({ description: 'When the source answered the request' }),
    request: z.string().nullable().meta({
      description: 'The source request that returned it, credentials redacted; null for SDK sources',
    }),
    storedAt: IsoTimeSchema.meta({ description: 'When the run wrote it' }),
    firstRunId: RunIdSchema.nullable().meta({ description: 'The run that first stored the entity' }),
  })
  .meta({ id: 'Provenance' });

/** A stored entity. */
export const ItemViewSchema = z
  .object({
    sourceId: SourceIdSchema,
    entityId: EntityIdSchema,
    version: z.string().meta({ description: "The source's modification time or revision" }),
    data: z.record(z.string(), z.unknown()),
    changedAt: IsoTimeSchema.nullable().meta({
      description: 'When its content last changed or it was tombstoned (the change-feed order)',
    }),
    tombstonedAt: IsoTimeSchema.nullable(),
    tombstonedBy: RunIdSchema.nullable().meta({
      description: 'The reconciliation run that confirmed it gone',
    }),
    provenance: ProvenanceSchema,
  })
  .meta({ id: 'Item' });

/** A page of items. */
export const ItemPageSchema = z
  .object({
    items: z.array(ItemViewSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null at the end' }),
    nextChangedSince: IsoTimeSchema.optional().meta({
      description:
        "With `changedSince`: where the next poll should start once this listing is read to its end (the listing's start less a safety lag)",
    }),
  })
  .meta({ id: 'ItemPage' });

/** Why an entity is (or is not) stored as it is. */
export const ITEM_STATUSES = [
  'stored',
  'stored_stale',
  'tombstoned',
  'dead_lettered',
  'discarded',
  'never_listed',
] as const;

/** The answer to "why is this row missing or stale?". */
export const ItemExplanationSchema = z
  .object({
    sourceId: SourceIdSchema,
    entityId: EntityIdSchema,
    status: z.enum(ITEM_STATUSES).meta({
      description:
        '`stored`; `stored_stale` (stored, but a later version failed: see `deadLetters`); `tombstoned`; `dead_lettered` (never stored: it failed); `discarded` (never stored: it failed and someone gave up on it, see `discard`); `never_listed` (no run stored or filed it)',
    }),
    summary: z.string().meta({ description: 'The story in plain words' }),
    item: ItemViewSchema.nullable(),
    lastListed: z
      .object({
        runId: RunIdSchema,
        mode: z.enum(RUN_MODES).nullable(),
        page: z.number().int().nullable(),
        at: IsoTimeSchema.nullable(),
      })
      .nullable()
      .meta({
        description:
          'The last run that wrote it, or found it alive when confirming it by id. A run that listed it unchanged writes nothing, so later runs may have listed it since: the source’s last successful run is when it was last synced',
      }),
    tombstone: z.object({ at: IsoTimeSchema, runId: RunIdSchema.nullable() }).nullable(),
    deadLetters: z.array(DeadLetterViewSchema).meta({
      description:
        "The entity's dead letter: open, or discarded (then `discard` says who gave up, when and why)",
    }),
    discard: DiscardViewSchema.nullable().meta({
      description: "Who discarded the entity's dead letter, when and why; null unless it is discarded",
    }),
    failedPages: z.array(DeadLetterViewSchema).meta({
      description:
        'Open page dead letters of the source: pages that may have held it (when it is not stored)',
    }),
    watermark: z.string().nullable().meta({ description: "The source's incremental watermark" }),
    shortRun: z
      .object({
        runId: RunIdSchema,
        mode: z.enum(RUN_MODES),
        shortBy: z.number().int(),
        reason: z.string().nullable(),
        heldAt: z.string().nullable().meta({
          description: 'Where that run held the watermark, so the next incremental reads on from there',
        }),
        finishedAt: IsoTimeSchema.nullable(),
      })
      .nullable()
      .meta({
        description:
          'When the entity is not stored: the newest of the source’s recent full and reconciliation runs whose completeness check found the store short of the source, so the entity may be one it missed',
      }),
  })
  .meta({ id: 'ItemExplanation' });
