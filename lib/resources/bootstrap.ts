import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, ResourceAlreadyExistsException } from '@aws-sdk/client-eventbridge';
import { ConflictException, CreateScheduleGroupCommand } from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../aws/clients.js';
import { ensureMacKey } from '../aws/kms-mac.js';
import type { ResourceNames } from '../config/env.js';
import { PAGE_QUEUE, type QueueDefinition, type TableDefinition, tablesWithNames } from './definitions.js';

/** Concrete addresses of the resources, as the handlers need them. */
export interface ResolvedResources {
  readonly names: ResourceNames;
  readonly pageQueueUrl: string;
  readonly pageQueueArn: string;
  readonly pageDlqUrl: string;
  readonly pageDlqArn: string;
}

/** Options for {@link bootstrapResources}. */
export interface BootstrapOptions {
  /** Override queue attributes, e.g. a short visibility timeout in a redrive test. */
  readonly queue?: Partial<QueueDefinition>;
  /**
   * Turn on the Items table's stream (new images), which the change feed reads: the local twin of
   * the stack's `changeFeed` setting. Default off.
   */
  readonly changeFeed?: boolean;
}

/** The stream the change feed reads: new images only (the feed never needs the old one). */
export const ITEMS_STREAM = { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' } as const;

/** Builds the CreateTable input of a table definition (on-demand billing, GSIs projecting as declared). */
export function createTableInput(name: string, def: TableDefinition): CreateTableCommandInput {
  const keys = [def.partitionKey, def.sortKey, ...def.indexes.flatMap((i) => [i.partitionKey, i.sortKey])];
  const attributes = new Map<string, string>();
  for (const key of keys) if (key) attributes.set(key.name, key.type);
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType: AttributeType as 'S' | 'N',
    })),
    KeySchema: [
      { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
      ...(def.sortKey ? [{ AttributeName: def.sortKey.name, KeyType: 'RANGE' as const }] : []),
    ],
    ...(def.indexes.length > 0
      ? {
          GlobalSecondaryIndexes: def.indexes.map((index) => ({
            IndexName: index.indexName,
            KeySchema: [
              { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
              ...(index.sortKey ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' as const }] : []),
            ],
            Projection: { ProjectionType: index.projection ?? 'ALL' },
          })),
        }
      : {}),
  };
}

async function ensureTable(
  clients: AwsClients,
  name: string,
  def: TableDefinition,
  stream: boolean,
): Promise<void> {
  try {
    await clients.dynamo.send(
      new CreateTableCommand({
        ...createTableInput(name, def),
        ...(stream ? { StreamSpecification: ITEMS_STREAM } : {}),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    const { Table } = await clients.dynamo.send(new DescribeTableCommand({ TableName: name }));
    if (stream && !Table?.StreamSpecification?.StreamEnabled)
      await clients.dynamo.send(
        new UpdateTableCommand({ TableName: name, StreamSpecification: ITEMS_STREAM }),
      );
  }
  // Emulators create tables synchronously; real DynamoDB needs a moment.
  for (let i = 0; i < 60; i++) {
    const { Table } = await clients.dynamo.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error(`table ${name} did not become ACTIVE`);
}

async function queueArn(clients: AwsClients, url: string): Promise<string> {
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${url} has no ARN`);
  return arn;
}

/**
 * Creates Harvester's tables, queues, event bus and schedule group in an emulator (or any
 * account, for a quick trial), idempotently. Production uses the CDK stack, built from the same
 * definitions.
 */
export async function bootstrapResources(
  clients: AwsClients,
  names: ResourceNames,
  options: BootstrapOptions = {},
): Promise<ResolvedResources> {
  const queue = { ...PAGE_QUEUE, ...options.queue };
  await Promise.all(
    tablesWithNames(names).map(({ name, def }) =>
      ensureTable(clients, name, def, options.changeFeed === true && def.nameKey === 'itemsTable'),
    ),
  );

  const dlq = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: names.pageDlq,
      Attributes: { MessageRetentionPeriod: String(queue.dlqRetentionSeconds) },
    }),
  );
  const pageDlqUrl = dlq.QueueUrl!;
  const pageDlqArn = await queueArn(clients, pageDlqUrl);
  const pages = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: names.pageQueue,
      Attributes: {
        VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(queue.messageRetentionSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: pageDlqArn,
          maxReceiveCount: queue.maxReceiveCount,
        }),
      },
    }),
  );
  const pageQueueUrl = pages.QueueUrl!;
  const pageQueueArn = await queueArn(clients, pageQueueUrl);

  try {
    await clients.events.send(new CreateEventBusCommand({ Name: names.eventBus }));
  } catch (error) {
    if (!(error instanceof ResourceAlreadyExistsException)) throw error;
  }
  try {
    await clients.scheduler.send(new CreateScheduleGroupCommand({ Name: names.scheduleGroup }));
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error;
  }
  // The stack creates its own key; locally the alias of the derived name stands in for it.
  if (names.configMacKey.startsWith('alias/')) await ensureMacKey(clients.kms, names.configMacKey);
  return { names, pageQueueUrl, pageQueueArn, pageDlqUrl, pageDlqArn };
}
