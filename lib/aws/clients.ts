import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsCredentialIdentity, Pluggable } from '@smithy/types';
import pLimit from 'p-limit';
import { AWS_SERVICES, type AwsService, type ServiceEndpoints } from '../config/endpoints.js';
import { readStoredNumber } from '../json/lossless.js';
import { installConflictRetry } from './conflict-retry.js';
import type { DynamoFaults } from './dynamo-faults.js';
import { type StrictMode, strictDynamoDB, strictModeFromEnv } from './dynamo-rules.js';
import { hardenDocumentClient } from './json-attributes.js';

/** The SDK clients Harvester talks to, created together so they share region and credentials. */
export interface AwsClients {
  /** Where each service's client sends its requests (empty on AWS): for clients made elsewhere. */
  readonly endpoints: ServiceEndpoints;
  /** The clients talk to emulators (dummy credentials, path-style S3). */
  readonly local: boolean;
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
 * SDK must not retry underneath it. Locally they use path-style addressing
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
  /** The endpoint of every service not in `endpoints` (an emulator: moto, LocalStack); unset means AWS. */
  readonly endpoint?: string | undefined;
  /**
   * Each service's own endpoint, which wins over `endpoint` (`config.endpoints`). An explicit
   * endpoint makes the SDK ignore its own `AWS_ENDPOINT_URL_<SERVICE>` variables, so the
   * configuration passes them in here.
   */
  readonly endpoints?: ServiceEndpoints;
  /**
   * Emulator behaviour: dummy credentials, path-style S3 (`config.local`). Default: true when any
   * endpoint is given.
   */
  readonly local?: boolean;
  /** Explicit credentials; defaults to the SDK's default chain (or dummy ones when local). */
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
   * Refuse, unsent, every DynamoDB request real DynamoDB would refuse (lib/aws/dynamo-rules.ts),
   * since emulators accept some of them. Default: `HARVESTER_STRICT_DYNAMODB` when set, else
   * `throw` with an emulator endpoint and `off` on real AWS.
   */
  readonly strictDynamoDB?: StrictMode;
  /**
   * Applied to every client as it is created; the Lambda functions pass the tracer's
   * `captureAWSv3Client`, so each SDK call shows in the invocation's trace.
   */
  readonly capture?: <T>(client: T) => T;
  /** Tests only: the seeded fault layer (conflicts, stale reads) on the DynamoDB clients; see lib/aws/dynamo-faults.ts. */
  readonly dynamoFaults?: DynamoFaults;
}

const EMULATOR_CREDENTIALS: AwsCredentialIdentity = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/**
 * Creates the SDK clients. Pass the result into stores and queues; never keep clients in module
 * statics, so tests and the local runtime can point each component at its own endpoint.
 *
 * @example
 * const clients = createAwsClients({ region: 'us-east-1', endpoint: 'http://127.0.0.1:5000' });
 * // DynamoDB on its own emulator, the rest on moto:
 * createAwsClients({ region: 'us-east-1', endpoint: 'http://127.0.0.1:5000', endpoints: { dynamodb: 'http://127.0.0.1:8000' } });
 */
export function createAwsClients(options: AwsClientOptions): AwsClients {
  const endpoints = serviceEndpoints(options);
  const local = options.local ?? Object.keys(endpoints).length > 0;
  const credentials = options.credentials ?? (local ? EMULATOR_CREDENTIALS : undefined);
  const shared = {
    region: options.region,
    ...(credentials ? { credentials } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  };
  const base = (service: AwsService) => ({
    ...shared,
    ...(endpoints[service] ? { endpoint: endpoints[service] } : {}),
  });
  const capture = options.capture ?? (<T>(client: T) => client);
  // The document client shares the DynamoDB client's middleware stack, so capturing one covers both.
  const dynamo = capture(new DynamoDBClient(base('dynamodb')));
  const sqs = capture(new SQSClient(base('sqs')));
  const scheduler = capture(new SchedulerClient(base('scheduler')));
  const events = capture(new EventBridgeClient(base('eventbridge')));
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
  // DynamoDB's own request rules, wherever DynamoDB is an emulator that does not enforce them.
  const strict = options.strictDynamoDB ??
    strictModeFromEnv() ?? { kind: endpoints.dynamodb ? 'throw' : 'off' };
  if (strict.kind !== 'off') dynamo.middlewareStack.use(strictDynamoDB(base('dynamodb'), strict));
  installConflictRetry(dynamo);
  options.dynamoFaults?.install(dynamo, new DynamoDBClient(base('dynamodb')));
  const s3 = s3Clients({ ...base('s3'), forcePathStyle: local }, options.middleware ?? [], capture);
  // Harvested data may hold numbers beyond 2^53 (stored exactly, see `lib/json/lossless.ts`):
  // they read back as NumberValue, never as a BigInt that JSON cannot serialize. Field names are
  // data: the translation (json-attributes.ts) never reads a value's kind from its keys.
  const doc = hardenDocumentClient(DynamoDBDocumentClient.from(dynamo), {
    removeUndefinedValues: true,
    wrapNumbers: readStoredNumber,
  });
  const kms = capture(new KMSClient(base('kms')));
  return { endpoints, local, dynamo, doc, sqs, scheduler, events, s3, kms };
}

/** Each service's endpoint: its own, else the shared one. */
function serviceEndpoints(options: AwsClientOptions): ServiceEndpoints {
  const endpoints: ServiceEndpoints = {};
  for (const service of AWS_SERVICES) {
    const endpoint = options.endpoints?.[service] ?? options.endpoint;
    if (endpoint) endpoints[service] = endpoint;
  }
  return endpoints;
}

function s3Clients(
  base: { region: string; endpoint?: string; credentials?: AwsCredentialIdentity; forcePathStyle: boolean },
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
