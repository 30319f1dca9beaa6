import { z } from 'zod';
import { RESUME_VERDICTS, RUN_MODES } from './model.js';

/**
 * A run's story: the append-only record of its transitions (docs/design.md, "Run events"). Each
 * event carries when (`at`, ISO), what (`type`), the epoch it belongs to, and a small typed
 * `detail`. Pure: the store (lib/store/run-events.ts) places events, the engine decides when.
 */

/** Most events one run keeps; the last place is held for its `ended` event. */
export const MAX_RUN_EVENTS = 500;

/**
 * Pages are recorded in bulk: one `pages` event when a chain commits its page 10, 20, 30… (its
 * page number a multiple of this), never one event per page. A chain's last pages are told by
 * its `partition_ended` or the run's `ended` event.
 */
export const PAGES_EVENT_EVERY = 10;

const partition = z
  .number()
  .int()
  .min(0)
  .nullable()
  .meta({ description: 'Partition index; null: the run’s own chain' });

/** Each event type and its detail. */
export const RUN_EVENT_DETAILS = {
  started: z.object({
    mode: z.enum(RUN_MODES),
    trigger: z.string(),
    verdict: z.enum(RESUME_VERDICTS),
  }),
  pages: z.object({
    partition,
    /** The page whose commit wrote the event. */
    throughPage: z.number().int().min(1),
    /** Pages committed since the chain's previous `pages` event. */
    pages: z.number().int().min(1),
    /** Entities the chain processed so far. */
    processed: z.number().int().min(0),
  }),
  deferred: z.object({
    partition,
    page: z.number().int().min(1),
    until: z.iso.datetime(),
    reason: z.string().max(300),
  }),
  waiting: z.object({
    /** When the page the run waits for became due. */
    since: z.iso.datetime(),
    /** The reaper sent a page whose send was never confirmed once more. */
    resent: z.boolean(),
  }),
  resumed: z.object({
    verdict: z.enum(RESUME_VERDICTS),
    from: z.enum(['checkpoint', 'scratch']),
    /** The epoch before the fence (the event's own `epoch` is the new one). */
    previousEpoch: z.number().int().min(1),
  }),
  partition_planned: z.object({
    partitions: z.number().int().min(2),
    total: z.number().int().min(0).nullable(),
  }),
  partition_ended: z.object({
    partition: z.number().int().min(0),
    pages: z.number().int().min(1),
    /** `idle`: the open last window waits to read its tail once the others are done. */
    state: z.enum(['done', 'idle']),
  }),
  cancelled: z.object({ by: z.string().max(2048).nullable() }),
  ended: z.object({
    state: z.enum(['succeeded', 'failed', 'cancelled']),
    failure: z.string().max(300).nullable(),
    processed: z.number().int().min(0),
    deadLetters: z.number().int().min(0),
    total: z.number().int().min(0).nullable(),
  }),
} as const;

export type RunEventType = keyof typeof RUN_EVENT_DETAILS;
export const RUN_EVENT_TYPES = Object.keys(RUN_EVENT_DETAILS) as RunEventType[];

/** What a writer hands the store: the type, its detail, the epoch, the time. */
export type RunEventInput = {
  [T in RunEventType]: {
    readonly type: T;
    readonly epoch: number;
    readonly at: number;
    readonly detail: z.infer<(typeof RUN_EVENT_DETAILS)[T]>;
  };
}[RunEventType];

const eventBase = {
  seq: z.number().int().min(1).max(MAX_RUN_EVENTS).meta({ description: 'Place in the story, from 1' }),
  at: z.iso.datetime().meta({ description: 'ISO 8601 UTC time of the transition' }),
  epoch: z.number().int().min(1),
};

function eventOf<T extends RunEventType>(type: T) {
  return z.object({ ...eventBase, type: z.literal(type), detail: RUN_EVENT_DETAILS[type] });
}

/** One stored event, as the store reads it and the API answers it: a union on `type`. */
export const RunEventSchema = z
  .discriminatedUnion('type', [
    eventOf('started'),
    eventOf('pages'),
    eventOf('deferred'),
    eventOf('waiting'),
    eventOf('resumed'),
    eventOf('partition_planned'),
    eventOf('partition_ended'),
    eventOf('cancelled'),
    eventOf('ended'),
  ])
  .meta({ id: 'RunEvent' });

export type RunEvent = z.infer<typeof RunEventSchema>;

/**
 * The identity of an event, for telling a re-sent append of the same transition from a new one:
 * two appends with one key are one event.
 */
export function eventKey(event: RunEventInput): string {
  const d = event.detail as Record<string, unknown>;
  const where = 'partition' in d && d.partition !== null ? `p${String(d.partition)}` : 'run';
  switch (event.type) {
    case 'pages':
      return `pages:${where}:${event.detail.throughPage}@${event.epoch}`;
    case 'deferred':
      return `deferred:${where}:${event.detail.page}:${event.detail.until}@${event.epoch}`;
    case 'waiting':
      return `waiting:${event.detail.since}@${event.epoch}`;
    case 'partition_ended':
      return `partition_ended:p${event.detail.partition}@${event.epoch}`;
    default:
      return `${event.type}@${event.epoch}`;
  }
}

/** The last event a run kept, as {@link placeEvent} needs it. */
export interface LastEvent {
  readonly seq: number;
  readonly epoch: number;
  readonly type: RunEventType;
  readonly key: string;
}

/**
 * Where an append goes: at `seq`, or not at all, and why.
 * - `duplicate`: the last event is this one (a redelivered or retried append);
 * - `stale`: the story already reached a later epoch (a fenced worker's late append);
 * - `after_end`: the run's `ended` event is written, nothing follows it;
 * - `capped`: no room left but the place kept for `ended` (counted in `dropped`).
 */
export type Placement =
  | { readonly kind: 'append'; readonly seq: number }
  | { readonly kind: 'duplicate' | 'stale' | 'after_end' | 'capped' };

/**
 * Decides an append from the run's last event. Pure.
 * @example
 * placeEvent({ seq: 499, epoch: 2, type: 'pages', key: 'pages:run:4990@2' }, pagesEvent) // → { kind: 'capped' }
 * placeEvent({ seq: 499, epoch: 2, type: 'pages', key: 'pages:run:4990@2' }, endedEvent) // → { kind: 'append', seq: 500 }
 */
export function placeEvent(
  last: LastEvent | undefined,
  event: RunEventInput,
  max: number = MAX_RUN_EVENTS,
): Placement {
  if (!last) return { kind: 'append', seq: 1 };
  if (last.key === eventKey(event)) return { kind: 'duplicate' };
  if (last.type === 'ended') return { kind: 'after_end' };
  if (last.epoch > event.epoch) return { kind: 'stale' };
  const room = event.type === 'ended' ? max : max - 1;
  if (last.seq >= room) return { kind: 'capped' };
  return { kind: 'append', seq: last.seq + 1 };
}
