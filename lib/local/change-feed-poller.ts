import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { AwsClients } from '../aws/clients.js';
import { type EntityEvent, entityEventOf } from '../events/change-feed.js';
import { EVENT_SOURCE } from '../events/details.js';
import { stringifyJson } from '../json/lossless.js';
import type { HarvesterLogger } from '../observability/logger.js';
import { createStreamsClient, dynamoEndpointOf, StreamReader, streamsEndpoint } from './dynamodb-streams.js';
import { type ReadableShard, ShardBook } from './stream-shards.js';

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
  /**
   * How often the stream's shards are listed again, to find the children of closed shards
   * (DynamoDB rolls shards about every four hours and splits them under load). Default 60 s.
   */
  readonly relistMs?: number;
  /** The Streams endpoint (AWS_ENDPOINT_URL_DYNAMODB_STREAMS); default: the DynamoDB client's. */
  readonly streamsEndpoint?: string | undefined;
  /** A Streams client to use instead of one made from the DynamoDB client's settings. */
  readonly streams?: DynamoDBStreamsClient;
  readonly now?: () => number;
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
 *
 * It keeps going where a naive reader stops: an expired iterator resumes after the last record
 * published, trimmed data at the oldest record left, and shards that appear later (children of a
 * closed shard) are found by listing again and read once their parent is done
 * (lib/local/stream-shards.ts). A batch the bus refuses is read again: at least once, as the pipes.
 */
export async function pollChangeFeed(options: ChangeFeedPollOptions): Promise<void> {
  const { clients, logger, signal } = options;
  const now = options.now ?? Date.now;
  const { Table } = await clients.dynamo.send(new DescribeTableCommand({ TableName: options.itemsTable }));
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn || !Table?.StreamSpecification?.StreamEnabled) {
    logger.warn('change feed is on but the items table has no stream', { table: options.itemsTable });
    return;
  }
  const client =
    options.streams ??
    createStreamsClient(
      clients.dynamo,
      streamsEndpoint({
        streams: options.streamsEndpoint ?? clients.endpoints.dynamodbStreams,
        dynamodb: await dynamoEndpointOf(clients.dynamo),
      }),
    );
  const stream = new StreamReader(client, streamArn);
  const book = new ShardBook();
  book.discover(await stream.shards(), 'LATEST');
  let listedAt = now();
  try {
    while (!signal.aborted) {
      if (now() - listedAt >= (options.relistMs ?? 60_000)) {
        listedAt = now();
        const added = await listAgain(stream, book, logger);
        if (added.length > 0) logger.info('change feed found new shards', { shards: added });
      }
      let read = 0;
      for (const shard of book.readable()) {
        try {
          read += await readShard(stream, book, shard, options);
        } catch (error) {
          if (signal.aborted) return;
          logger.error('change feed read failed', { shard: shard.shardId, error: String(error) });
        }
      }
      if (read === 0) await sleep(options.idleMs ?? 250, signal);
    }
  } finally {
    if (!options.streams) client.destroy();
  }
}

/** Lists the shards again; a failed listing is retried at the next interval, reads go on meanwhile. */
async function listAgain(stream: StreamReader, book: ShardBook, logger: HarvesterLogger): Promise<string[]> {
  try {
    return book.discover(await stream.shards(), 'TRIM_HORIZON');
  } catch (error) {
    logger.error('change feed could not list shards', { error: String(error) });
    return [];
  }
}

/** Reads one batch of a shard and publishes its events; returns the records read. */
async function readShard(
  stream: StreamReader,
  book: ShardBook,
  shard: ReadableShard,
  options: ChangeFeedPollOptions,
): Promise<number> {
  let iterator = shard.iterator;
  if (iterator === undefined) {
    const taken = await stream.iterator(shard.shardId, shard.position);
    if ('lost' in taken) {
      options.logger.warn('change feed iterator position lost', { shard: shard.shardId, why: taken.lost });
      book.lost(shard.shardId, taken.lost);
      return 0;
    }
    iterator = taken.iterator;
    book.issued(shard.shardId, iterator);
  }
  const answer = await stream.records(iterator);
  if ('lost' in answer) {
    options.logger.warn('change feed iterator lost, taking a new one', {
      shard: shard.shardId,
      why: answer.lost,
    });
    book.lost(shard.shardId, answer.lost);
    return 0;
  }
  const events = answer.records.flatMap((record) => entityEventOf(record, options.includeData) ?? []);
  await publish(options.clients, options.eventBus, events);
  book.advance(shard.shardId, answer.next, answer.lastSequenceNumber);
  return answer.records.length;
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
