import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { AwsClients } from '../aws/clients.js';
import { type EntityEvent, entityEventOf } from '../events/change-feed.js';
import { EVENT_SOURCE } from '../events/details.js';
import { stringifyJson } from '../json/lossless.js';
import type { HarvesterLogger } from '../observability/logger.js';
import { DynamoDbStreams } from './dynamodb-streams.js';

/** Options of {@link pollChangeFeed}. */
export interface ChangeFeedPollOptions {
  readonly clients: AwsClients;
  readonly itemsTable: string;
  readonly eventBus: string;
  readonly includeData: boolean;
  readonly logger: HarvesterLogger;
  readonly signal: AbortSignal;
  /** Pause between reads of an idle stream. Default 250 ms. */
  readonly idleMs?: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/**
 * The local half of the change feed: reads the Items table's stream on the emulator from the
 * moment it starts, and puts the events the stack's pipes would (same filter, same details:
 * lib/events/change-feed.ts) on the Harvester bus. Resolves when `signal` aborts. A table without
 * a stream (the feed is off) ends it at once, with a log line.
 */
export async function pollChangeFeed(options: ChangeFeedPollOptions): Promise<void> {
  const { clients, logger, signal } = options;
  const { Table } = await clients.dynamo.send(new DescribeTableCommand({ TableName: options.itemsTable }));
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn || !Table?.StreamSpecification?.StreamEnabled) {
    logger.warn('change feed is on but the items table has no stream', { table: options.itemsTable });
    return;
  }
  const streams = new DynamoDbStreams(clients.dynamo, clients.endpoints.dynamodbStreams);
  // One iterator per shard: an emulator keeps one shard; real streams split, which the pipes handle.
  const iterators = new Map<string, string | null>();
  for (const shard of await streams.shards(streamArn))
    iterators.set(shard, await streams.iterator(streamArn, shard, 'LATEST'));
  while (!signal.aborted) {
    let read = 0;
    for (const [shard, iterator] of iterators) {
      if (iterator === null) continue;
      try {
        const { records, next } = await streams.records(iterator);
        read += records.length;
        const events = records.flatMap((record) => entityEventOf(record, options.includeData) ?? []);
        await publish(clients, options.eventBus, events);
        iterators.set(shard, next);
      } catch (error) {
        if (signal.aborted) return;
        logger.error('change feed read failed', { shard, error: String(error) });
      }
    }
    if (read === 0) await sleep(options.idleMs ?? 250, signal);
  }
}

/** Puts events on the bus, ten an entry batch (the PutEvents maximum). */
async function publish(clients: AwsClients, bus: string, events: readonly EntityEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 10) {
    const result = await clients.events.send(
      new PutEventsCommand({
        Entries: events.slice(i, i + 10).map((event) => ({
          EventBusName: bus,
          Source: EVENT_SOURCE,
          DetailType: event.detailType,
          Detail: stringifyJson(event.detail),
        })),
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0)
      throw new Error(`event bus refused ${result.FailedEntryCount} change events`);
  }
}
