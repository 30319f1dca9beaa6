import { Sha256 } from '@aws-crypto/sha256-js';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { StreamRecordLike } from '../events/change-feed.js';

/**
 * A minimal DynamoDB Streams client (DescribeStream, GetShardIterator, GetRecords) for the local
 * runtime's change feed: the JSON 1.0 protocol, SigV4-signed like the DynamoDB client it borrows
 * its endpoint, region and credentials from. On AWS the EventBridge Pipes read the stream; this
 * only ever talks to an emulator.
 */
export class DynamoDbStreams {
  /**
   * @param endpoint The Streams endpoint when it is not the DynamoDB client's own
   *   (`AWS_ENDPOINT_URL_DYNAMODB_STREAMS`).
   */
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly endpoint?: string,
  ) {}

  /** The shard ids of a stream. */
  async shards(streamArn: string): Promise<string[]> {
    const answer = (await this.call('DescribeStream', { StreamArn: streamArn })) as {
      StreamDescription?: { Shards?: { ShardId: string }[] };
    };
    return (answer.StreamDescription?.Shards ?? []).map((shard) => shard.ShardId);
  }

  /** An iterator at the shard's newest record (`LATEST`) or oldest (`TRIM_HORIZON`). */
  async iterator(streamArn: string, shardId: string, type: 'LATEST' | 'TRIM_HORIZON'): Promise<string> {
    const answer = (await this.call('GetShardIterator', {
      StreamArn: streamArn,
      ShardId: shardId,
      ShardIteratorType: type,
    })) as { ShardIterator: string };
    return answer.ShardIterator;
  }

  /** The records after an iterator, and the iterator to read next (null: the shard is closed). */
  async records(
    iterator: string,
    limit = 100,
  ): Promise<{ records: StreamRecordLike[]; next: string | null }> {
    const answer = (await this.call('GetRecords', { ShardIterator: iterator, Limit: limit })) as {
      Records?: StreamRecordLike[];
      NextShardIterator?: string;
    };
    return { records: answer.Records ?? [], next: answer.NextShardIterator ?? null };
  }

  private async call(operation: string, body: Record<string, unknown>): Promise<unknown> {
    const config = this.dynamo.config;
    const url = await this.url();
    const payload = JSON.stringify(body);
    const signer = new SignatureV4({
      service: 'dynamodb',
      region: await config.region(),
      credentials: config.credentials,
      sha256: Sha256,
    });
    const request = await signer.sign(
      new HttpRequest({
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        headers: {
          host: url.host,
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDBStreams_20120810.${operation}`,
        },
        body: payload,
      }),
    );
    const response = await fetch(url, { method: 'POST', headers: request.headers, body: payload });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`DynamoDB Streams ${operation} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }

  private async url(): Promise<URL> {
    if (this.endpoint) return new URL(this.endpoint);
    const endpoint = await this.dynamo.config.endpoint?.();
    if (!endpoint)
      throw new Error('the DynamoDB client has no endpoint: the local change feed needs an emulator');
    return new URL(
      `${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path}`,
    );
  }
}
