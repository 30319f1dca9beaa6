import {
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { INDEX } from '../resources/definitions.js';
import {
  eventKey,
  type LastEvent,
  MAX_RUN_EVENTS,
  type Placement,
  placeEvent,
  type RunEvent,
  type RunEventInput,
  RunEventSchema,
  type RunEventType,
} from '../run/run-events.js';
import { isConditionFailure, transactionReasons } from './errors.js';
import { batchGetAll, deleteKeys, InvalidCursorError, type Page, queryAll } from './paging.js';

/*
 * A run's story (lib/run/run-events.ts) as stored: one item per event beside the run in the
 * SyncRuns table, `<runId>#event#<seq>`, and one head item, `<runId>#events`, holding the last
 * event's place and identity and how many events were dropped for want of room. An append reads
 * the head strongly consistent, decides with `placeEvent`, and writes the event and the new head
 * in one transaction conditioned on the head it read; a writer that lost the race reads again.
 * Event and head items carry no `sourceId`, `state` or `activeShard`, so neither the by-source
 * nor the active-run index lists them and the operators' scan of runs leaves them out. They have
 * no `expiresAt`: they are kept as long as the run (and deleted with it).
 */

const EVENT_KEY_INFIX = '#event#';
const HEAD_KEY_SUFFIX = '#events';
/**
 * Tries of one append. Each lost race means another writer's event landed, so k writers racing on
 * one run all land within k tries; partitions telling their pages at the same moment are the most.
 */
const APPEND_ATTEMPTS = 12;

function eventItemKey(runId: string, seq: number): { runId: string } {
  return { runId: `${runId}${EVENT_KEY_INFIX}${String(seq).padStart(3, '0')}` };
}

function headKey(runId: string): { runId: string } {
  return { runId: `${runId}${HEAD_KEY_SUFFIX}` };
}

/** The head of a run's story: where its last event sits, and how many found no room. */
export interface StoryHead extends LastEvent {
  readonly dropped: number;
}

/** One page of a run's story, oldest first. */
export interface StoryPage extends Page<RunEvent> {
  /** Events the run could not keep (its story was full); at least this many. */
  readonly dropped: number;
}

/** Run events, in the SyncRuns table. */
export class RunEventLog {
  private readonly max: number;
  private readonly pause: (ms: number) => Promise<void>;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
    /** `max`: most events a run keeps (tests shrink it); `pause`: the wait after a collision. */
    options: { max?: number; pause?: (ms: number) => Promise<void> } = {},
  ) {
    this.max = options.max ?? MAX_RUN_EVENTS;
    this.pause = options.pause ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** The head of the run's story; undefined while it has none. */
  async head(runId: string): Promise<StoryHead | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: headKey(runId), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return {
      seq: Item.seq as number,
      epoch: Item.epoch as number,
      type: Item.type as RunEventType,
      key: Item.eventKey as string,
      dropped: (Item.dropped ?? 0) as number,
    };
  }

  /**
   * Appends `event` to the run's story, or decides not to (a duplicate of the last event, a stale
   * epoch, after the end, no room): returns where it went. Two writers racing on one run both
   * land, one after the other; after {@link APPEND_ATTEMPTS} tries the error is thrown.
   */
  async append(runId: string, event: RunEventInput): Promise<Placement> {
    for (let attempt = 1; ; attempt++) {
      const head = await this.head(runId);
      const placement = placeEvent(head, event, this.max);
      try {
        if (placement.kind === 'capped' && head) await this.countDropped(runId, head.seq);
        else if (placement.kind === 'append') await this.write(runId, event, placement.seq, head);
        return placement;
      } catch (error) {
        const reasons = transactionReasons(error);
        const lost = isConditionFailure(error) || reasons?.includes('ConditionalCheckFailed') === true;
        const conflict = reasons?.includes('TransactionConflict') === true;
        if ((!lost && !conflict) || attempt >= APPEND_ATTEMPTS) throw error;
        // Jittered, so writers that keep colliding (partitions ending their 10th page together) spread out.
        await this.pause(Math.random() * 10 * Math.min(attempt, 5));
      }
    }
  }

  /** One page of the run's story, oldest first, from after `cursor` (a place). */
  async list(runId: string, options: { limit: number; cursor?: string | undefined }): Promise<StoryPage> {
    const after = placeOf(options.cursor);
    const head = await this.head(runId);
    if (!head) return { items: [], cursor: undefined, dropped: 0 };
    const last = Math.min(head.seq, after + options.limit);
    const seqs = Array.from({ length: Math.max(0, last - after) }, (_, i) => after + 1 + i);
    const found = await this.read(runId, seqs);
    return {
      items: found,
      cursor: last < head.seq ? String(last) : undefined,
      dropped: head.dropped,
    };
  }

  /** Deletes the stories of every run of `sourceId` (its runs are being deleted). Returns how many runs had one. */
  async deleteAllOf(sourceId: string): Promise<number> {
    const runs = await queryAll(this.doc, {
      TableName: this.tableName,
      IndexName: INDEX.runsBySource,
      KeyConditionExpression: 'sourceId = :s',
      ExpressionAttributeValues: { ':s': sourceId },
      ProjectionExpression: 'runId',
    });
    // The heads say how many events each run has; one batched read for all of them.
    const heads = await batchGetAll(
      this.doc,
      this.tableName,
      (runs as { runId: string }[]).map(({ runId }) => headKey(runId)),
      { expression: 'eventOf, seq' },
    );
    const keys = heads.flatMap((head) => {
      const runId = head.eventOf as string;
      return [
        headKey(runId),
        ...Array.from({ length: head.seq as number }, (_, i) => eventItemKey(runId, i + 1)),
      ];
    });
    await deleteKeys(this.doc, this.tableName, keys);
    return runs.length;
  }

  private async write(runId: string, event: RunEventInput, seq: number, read: StoryHead | undefined) {
    const key = eventKey(event);
    await this.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...eventItemKey(runId, seq),
                eventOf: runId,
                seq,
                at: new Date(event.at).toISOString(),
                epoch: event.epoch,
                type: event.type,
                detail: event.detail,
              },
              ConditionExpression: 'attribute_not_exists(runId)',
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...headKey(runId),
                eventOf: runId,
                seq,
                epoch: event.epoch,
                type: event.type,
                eventKey: key,
                dropped: read?.dropped ?? 0,
              },
              ...(read
                ? { ConditionExpression: 'seq = :read', ExpressionAttributeValues: { ':read': read.seq } }
                : { ConditionExpression: 'attribute_not_exists(runId)' }),
            },
          },
        ],
      }),
    );
  }

  private async countDropped(runId: string, seq: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: headKey(runId),
        UpdateExpression: 'ADD dropped :one',
        ConditionExpression: 'seq = :seq',
        ExpressionAttributeValues: { ':one': 1, ':seq': seq },
      }),
    );
  }

  private async read(runId: string, seqs: readonly number[]): Promise<RunEvent[]> {
    const items = await batchGetAll(
      this.doc,
      this.tableName,
      seqs.map((seq) => eventItemKey(runId, seq)),
    );
    return items.map(toEvent).sort((a, b) => a.seq - b.seq);
  }
}

/** A stored event as the model: what the table holds is checked, not trusted. */
function toEvent(item: Record<string, unknown>): RunEvent {
  return RunEventSchema.parse({
    seq: item.seq,
    at: item.at,
    epoch: item.epoch,
    type: item.type,
    detail: item.detail,
  });
}

/** The place a listing cursor names (0: from the start). */
function placeOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,4}$/.test(cursor)) throw new InvalidCursorError('the pagination cursor is not valid');
  return Number(cursor);
}
