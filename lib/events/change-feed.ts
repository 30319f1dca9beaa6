import type { z } from 'zod';
import { readStoredNumber } from '../json/lossless.js';
import { LAST_WRITE } from '../store/item-provenance.js';
import { DETAIL_TYPES, type EntityEventDetailSchema } from './details.js';

/**
 * The change feed: item writes read from the Items table's DynamoDB stream become `Entity Changed`
 * and `Entity Tombstoned` events. One definition serves both deliveries: on AWS, the filters
 * below are the EventBridge Pipes' filter criteria and {@link entityEventOf} runs in the pipes'
 * enrichment function; locally, the runtime reads the emulator's stream and applies both itself.
 *
 * Only writes that changed the entity publish: every item write says what it did in `lastWrite`
 * (lib/store/item-provenance.ts), so a re-read of unchanged content, a reconciliation's "seen"
 * mark or any bookkeeping write never raises an event.
 */

/** A record of a DynamoDB stream (NEW_IMAGE), as GetRecords and the pipe deliver it. */
export interface StreamRecordLike {
  readonly eventName?: string;
  readonly dynamodb?: {
    readonly Keys?: Record<string, AttributeValue>;
    readonly NewImage?: Record<string, AttributeValue>;
    readonly SequenceNumber?: string;
  };
}

/** A DynamoDB attribute value in its wire form. */
export type AttributeValue = Record<string, unknown>;

/** An entity event ready to put on the bus. */
export interface EntityEvent {
  readonly detailType: typeof DETAIL_TYPES.entityChanged | typeof DETAIL_TYPES.entityTombstoned;
  readonly detail: z.infer<typeof EntityEventDetailSchema>;
}

/** The detail type each `lastWrite` publishes as. */
export const PUBLISHED_WRITES = {
  [LAST_WRITE.changed]: DETAIL_TYPES.entityChanged,
  [LAST_WRITE.tombstoned]: DETAIL_TYPES.entityTombstoned,
} as const;

/**
 * The EventBridge Pipes filter pattern of one detail type: inserts and modifications whose new
 * image's `lastWrite` is the write that publishes it. Pipes bill only the records that pass.
 */
export function streamFilterPattern(lastWrite: keyof typeof PUBLISHED_WRITES): Record<string, unknown> {
  return {
    eventName: ['INSERT', 'MODIFY'],
    dynamodb: { NewImage: { lastWrite: { S: [lastWrite] } } },
  };
}

/** A DynamoDB attribute value as plain JSON (numbers beyond a double kept exact, as the store reads them). */
export function fromAttributeValue(value: AttributeValue): unknown {
  if ('S' in value) return value.S;
  if ('N' in value) return readStoredNumber(String(value.N));
  if ('BOOL' in value) return value.BOOL;
  if ('NULL' in value) return null;
  if ('M' in value) return fromImage(value.M as Record<string, AttributeValue>);
  if ('L' in value) return (value.L as AttributeValue[]).map(fromAttributeValue);
  if ('SS' in value) return value.SS;
  if ('NS' in value) return (value.NS as string[]).map((n) => readStoredNumber(n));
  return undefined;
}

/** A stream image (`NewImage`) as a plain object. */
export function fromImage(image: Record<string, AttributeValue>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, fromAttributeValue(value)]));
}

function isoOf(value: unknown): string | null {
  const ms = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/**
 * The event a stream record publishes, or null for a write that changed nothing a consumer
 * follows (and for removals: items are tombstoned, never deleted, by the engine).
 */
export function entityEventOf(record: StreamRecordLike, includeData: boolean): EntityEvent | null {
  if (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') return null;
  const image = record.dynamodb?.NewImage;
  if (!image) return null;
  const item = fromImage(image);
  const detailType = PUBLISHED_WRITES[item.lastWrite as keyof typeof PUBLISHED_WRITES];
  if (!detailType) return null;
  const sourceId = String(item.sourceId);
  const entityId = String(item.entityId);
  return {
    detailType,
    detail: {
      sourceId,
      entityId,
      version: String(item.version),
      // Rows last changed before the store counted changes carry none: they order before any counted change.
      changeSequence: Number(item.changeSeq ?? 0),
      runId: String(item.changedBy ?? item.runId),
      changedAt: isoOf(item.changedAt) ?? isoOf(item.syncedAt)!,
      tombstonedAt: item.tombstonedAt === undefined ? null : isoOf(item.tombstonedAt),
      link: `/sources/${encodeURIComponent(sourceId)}/items/${encodeURIComponent(entityId)}`,
      ...(includeData && item.data && typeof item.data === 'object'
        ? { data: item.data as Record<string, unknown> }
        : {}),
    },
  };
}

/** The part of an entity event that orders it among its entity's events. */
export type OrderedEntityEvent = Pick<EntityEvent['detail'], 'sourceId' | 'entityId' | 'changeSequence'>;

/**
 * The one ordering rule of the change feed. `Entity Changed` and `Entity Tombstoned` travel through
 * two pipes and the bus, none of which keeps order, and each may be delivered more than once; but
 * every event carries its entity's `changeSequence`, counted by the write that made the change. So
 * for one entity, the event with the greatest `changeSequence` is its current state; an event
 * whose number is not greater than the one a consumer holds is older or a repeat, and is dropped.
 *
 * @returns whether `candidate` supersedes `held` (no held event of the same entity: it does).
 * @example
 * const held = state.get(key(event.detail));
 * if (supersedes(event.detail, held)) state.set(key(event.detail), event.detail);
 */
export function supersedes(candidate: OrderedEntityEvent, held: OrderedEntityEvent | undefined): boolean {
  // Events of different entities are not ordered against each other: each stands alone.
  if (!held || candidate.sourceId !== held.sourceId || candidate.entityId !== held.entityId) return true;
  return candidate.changeSequence > held.changeSequence;
}
