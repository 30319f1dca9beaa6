import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsCredentialIdentity, Pluggable } from '@smithy/types';
import pLimit from 'p-limit';

/** The SDK clients Harvester talks to, created together so they share region, endpoint and credentials. */
export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly doc: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly scheduler: SchedulerClient;
  readonly events: EventBridgeClient;
}

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
  const dynamo = new DynamoDBClient(base);
  const sqs = new SQSClient(base);
  const scheduler = new SchedulerClient(base);
  const events = new EventBridgeClient(base);
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
  const doc = DynamoDBDocumentClient.from(dynamo, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { dynamo, doc, sqs, scheduler, events };
}

/** Closes the clients' sockets so a process can exit promptly. */
export function destroyAwsClients(clients: AwsClients): void {
  clients.doc.destroy();
  clients.dynamo.destroy();
  clients.sqs.destroy();
  clients.scheduler.destroy();
  clients.events.destroy();
}
