import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { StreamRecordLike } from '../events/change-feed.js';
import type { IteratorLoss, ListedShard, ShardPosition } from './stream-shards.js';

/**
 * The DynamoDB Streams calls of the local change feed (DescribeStream, GetShardIterator,
 * GetRecords) over the SDK's own client. The two errors that only mean "take a new iterator"
 * come back as values, so the poller decides what to do with them (lib/local/stream-shards.ts);
 * every other failure throws.
 */

/**
 * The Streams endpoint: `streams` (AWS_ENDPOINT_URL_DYNAMODB_STREAMS, the SDK's own name for it)
 * when set, else the DynamoDB endpoint (an emulator serves both on one port), else none (AWS).
 */
export function streamsEndpoint(choice: {
  readonly streams?: string | undefined;
  readonly dynamodb?: string | undefined;
}): string | undefined {
  return choice.streams || choice.dynamodb || undefined;
}

/** The URL a DynamoDB client was configured with, if any. */
export async function dynamoEndpointOf(dynamo: DynamoDBClient): Promise<string | undefined> {
  const endpoint = await dynamo.config.endpoint?.();
  if (!endpoint) return undefined;
  const port = endpoint.port ? `:${endpoint.port}` : '';
  return `${endpoint.protocol}//${endpoint.hostname}${port}${endpoint.path}`;
}

/**
 * A Streams client with the DynamoDB client's region and credentials at `endpoint`.
 *
 * @example
 * const streams = createStreamsClient(clients.dynamo, streamsEndpoint({
 *   streams: env.AWS_ENDPOINT_URL_DYNAMODB_STREAMS,
 *   dynamodb: await dynamoEndpointOf(clients.dynamo),
 * }));
 */
export function createStreamsClient(
  dynamo: DynamoDBClient,
  endpoint: string | undefined,
): DynamoDBStreamsClient {
  return new DynamoDBStreamsClient({
    region: dynamo.config.region,
    credentials: dynamo.config.credentials,
    ...(endpoint ? { endpoint } : {}),
  });
}

/** A GetRecords answer: the records and the next iterator (null: the shard is closed and read). */
export type RecordsRead =
  | {
      readonly records: StreamRecordLike[];
      readonly next: string | null;
      readonly lastSequenceNumber?: string;
    }
  | { readonly lost: IteratorLoss };

/** An iterator, or why none can be had at that position. */
export type IteratorTaken = { readonly iterator: string } | { readonly lost: IteratorLoss };

/** By name, as the SDK's service exceptions are meant to be told apart (instances may come from another copy of the package). */
function lossOf(error: unknown): IteratorLoss | undefined {
  const name = (error as { name?: unknown } | undefined)?.name;
  if (name === 'ExpiredIteratorException') return 'expired';
  if (name === 'TrimmedDataAccessException') return 'trimmed';
  return undefined;
}

/** One stream's reads. */
export class StreamReader {
  constructor(
    private readonly client: DynamoDBStreamsClient,
    private readonly streamArn: string,
  ) {}

  /** Every shard the stream lists (open and recently closed), all pages of DescribeStream. */
  async shards(): Promise<ListedShard[]> {
    const shards: ListedShard[] = [];
    let after: string | undefined;
    do {
      const { StreamDescription } = await this.client.send(
        new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: after }),
      );
      for (const shard of StreamDescription?.Shards ?? [])
        if (shard.ShardId) shards.push({ shardId: shard.ShardId, parentShardId: shard.ParentShardId });
      after = StreamDescription?.LastEvaluatedShardId;
    } while (after);
    return shards;
  }

  /** An iterator at `position` in a shard. */
  async iterator(shardId: string, position: ShardPosition): Promise<IteratorTaken> {
    try {
      const { ShardIterator } = await this.client.send(
        new GetShardIteratorCommand({
          StreamArn: this.streamArn,
          ShardId: shardId,
          ShardIteratorType: position.type,
          ...(position.type === 'AFTER_SEQUENCE_NUMBER' ? { SequenceNumber: position.sequenceNumber } : {}),
        }),
      );
      if (!ShardIterator) throw new Error(`GetShardIterator gave no iterator for ${shardId}`);
      return { iterator: ShardIterator };
    } catch (error) {
      const lost = lossOf(error);
      if (lost) return { lost };
      throw error;
    }
  }

  /** The records after an iterator. */
  async records(iterator: string, limit = 100): Promise<RecordsRead> {
    try {
      const answer = await this.client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: limit }));
      const records = (answer.Records ?? []) as StreamRecordLike[];
      const last = records.at(-1)?.dynamodb?.SequenceNumber;
      return {
        records,
        next: answer.NextShardIterator ?? null,
        ...(last ? { lastSequenceNumber: last } : {}),
      };
    } catch (error) {
      const lost = lossOf(error);
      if (lost) return { lost };
      throw error;
    }
  }
}
