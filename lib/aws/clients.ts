import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsCredentialIdentity, Pluggable } from '@smithy/types';
import pLimit from 'p-limit';
import { readStoredNumber } from '../json/lossless.js';
import { hardenDocumentClient } from './json-attributes.js';

/** The SDK clients Harvester talks to, created together so they share region, endpoint and credentials. */
export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly doc: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly scheduler: SchedulerClient;
  readonly events: EventBridgeClient;
  /** S3 clients for the `s3-objects` connector's buckets, one per region (see {@link S3Clients}). */
  readonly s3: S3Clients;
  /** KMS, for the HMAC key that signs source configs (lib/aws/kms-mac.ts). */
  readonly kms: KMSClient;
}

/**
 * S3 clients by region, created on first use: a bucket may live in another region than the stack.
 * They make one attempt per request (`maxAttempts: 1`): Harvester's own retry loop classifies
 * each failure and decides about retries, waits and deferrals, as for every other source, so the
 * SDK must not retry underneath it. With an emulator endpoint they use path-style addressing
 * (`http://127.0.0.1:5000/bucket/key`), since an emulator has no per-bucket host names.
 */
export interface S3Clients {
  (region?: string): S3Client;
  /** Closes every client created so far. */
  destroy(): void;
}

/** Longest an S3 request may take before it fails as a (transient) timeout. */
const S3_REQUEST_TIMEOUT_MS = 30_000;

/** Options for {@link createAwsClients}. */
export interface AwsClientOptions {
  readonly region: string;
  /** An emulator endpoint (moto, LocalStack); unset means real AWS. */
  readonly endpoint?: string | undefined;
  /** Explicit credentials; defaults to the SDK's default chain (or dummy ones with an emulator endpoint). */
  readonly credentials?: AwsCredentialIdentity;
  /** Extra middleware added to every client, e.g. the benchmark's request counter. */
  readonly middleware?: readonly Pluggable<object, object>[];
  readonly maxAttempts?: number;
  /**
   * Send this process's DynamoDB requests one at a time. Only for an emulator whose conditional
   * writes are not atomic (a plain moto_server): it keeps concurrent conditional writes from
   * racing inside the emulator, which real DynamoDB never allows.
   */
  readonly serializeDynamoDB?: boolean;
  /**
   * Applied to every client as it is created; the Lambda functions pass the tracer's
   * `captureAWSv3Client`, so each SDK call shows in the invocation's trace.
   */
  readonly capture?: <T>(client: T) => T;
}

const EMULATOR_CREDENTIALS: AwsCredentialIdentity = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/**
 * Creates the SDK clients. Pass the result into stores and queues; never keep clients in module
 * statics, so tests and the local runtime can point each component at its own endpoint.
 *
 * @example
 * const clients = createAwsClients({ region: 'us-east-1', endpoint: 'http://127.0.0.1:5000' });
 */
export function createAwsClients(options: AwsClientOptions): AwsClients {
  const credentials = options.credentials ?? (options.endpoint ? EMULATOR_CREDENTIALS : undefined);
  const base = {
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(credentials ? { credentials } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  };
  const capture = options.capture ?? (<T>(client: T) => client);
  // The document client shares the DynamoDB client's middleware stack, so capturing one covers both.
  const dynamo = capture(new DynamoDBClient(base));
  const sqs = capture(new SQSClient(base));
  const scheduler = capture(new SchedulerClient(base));
  const events = capture(new EventBridgeClient(base));
  for (const client of [dynamo, sqs, scheduler, events]) {
    for (const plugin of options.middleware ?? []) client.middlewareStack.use(plugin as never);
  }
  if (options.serializeDynamoDB) {
    const one = pLimit(1);
    dynamo.middlewareStack.add((next) => (args) => one(() => next(args)), {
      step: 'initialize',
      name: 'harvesterSerializeDynamoDB',
    });
  }
  const s3 = s3Clients(base, options.middleware ?? [], capture);
  // Harvested data may hold numbers beyond 2^53 (stored exactly, see `lib/json/lossless.ts`):
  // they read back as NumberValue, never as a BigInt that JSON cannot serialize. Field names are
  // data: the translation (json-attributes.ts) never reads a value's kind from its keys.
  const doc = hardenDocumentClient(DynamoDBDocumentClient.from(dynamo), {
    removeUndefinedValues: true,
    wrapNumbers: readStoredNumber,
  });
  const kms = capture(new KMSClient(base));
  return { dynamo, doc, sqs, scheduler, events, s3, kms };
}

function s3Clients(
  base: { region: string; endpoint?: string; credentials?: AwsCredentialIdentity },
  middleware: readonly Pluggable<object, object>[],
  capture: <T>(client: T) => T,
): S3Clients {
  const byRegion = new Map<string, S3Client>();
  const get = (region: string = base.region): S3Client => {
    let client = byRegion.get(region);
    if (!client) {
      client = capture(
        new S3Client({
          ...base,
          region,
          maxAttempts: 1,
          forcePathStyle: base.endpoint !== undefined,
          requestHandler: { requestTimeout: S3_REQUEST_TIMEOUT_MS, connectionTimeout: 5_000 },
        }),
      );
      for (const plugin of middleware) client.middlewareStack.use(plugin as never);
      byRegion.set(region, client);
    }
    return client;
  };
  return Object.assign(get, {
    destroy() {
      for (const client of byRegion.values()) client.destroy();
      byRegion.clear();
    },
  });
}

/** Closes the clients' sockets so a process can exit promptly. */
export function destroyAwsClients(clients: AwsClients): void {
  clients.doc.destroy();
  clients.dynamo.destroy();
  clients.sqs.destroy();
  clients.scheduler.destroy();
  clients.events.destroy();
  clients.s3.destroy();
  clients.kms.destroy();
}
