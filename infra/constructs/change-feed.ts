import { Duration, Names, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as pipes from 'aws-cdk-lib/aws-pipes';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PUBLISHED_WRITES, streamFilterPattern } from '../../lib/events/change-feed.js';
import { EVENT_SOURCE } from '../../lib/events/details.js';
import { HarvesterFunction } from './harvester-function.js';

/** Props of {@link ChangeFeed}. */
export interface ChangeFeedProps {
  /** The Items table, with its stream on. */
  readonly items: dynamodb.Table;
  readonly bus: events.EventBus;
  /** Events carry the entity's data. */
  readonly includeData: boolean;
  readonly tracing: boolean;
  readonly removalPolicy: RemovalPolicy;
}

/** Records a pipe reads from the stream per enrichment call. */
const BATCH_SIZE = 10;

/**
 * Attempts a pipe makes on a batch before it gives up and dead-letters it. Ten spans a bus or
 * enrichment outage of minutes (Pipes backs off between attempts) while staying far inside the
 * stream's 24 h retention, so a dead-lettered batch can still be recovered (docs/items.md).
 */
const MAXIMUM_RETRY_ATTEMPTS = 10;

/** Longest SQS keeps a message: a dead-lettered batch waits up to 14 days for an operator. */
const DLQ_RETENTION = Duration.days(14);

/**
 * The change feed on AWS: two EventBridge Pipes read the Items table's stream, each keeping the
 * writes of one kind (`lastWrite` = `changed` or `tombstoned`, lib/events/change-feed.ts), shape
 * them in one enrichment function, and put them on the Harvester bus as `Entity Changed` or
 * `Entity Tombstoned`. Two pipes, because a pipe's detail type is fixed; they are the stream's
 * two readers (DynamoDB serves at most two per shard without throttling), so other consumers
 * subscribe to the bus, not the stream.
 *
 * Each pipe's role may read only this stream, invoke only the enrichment function, put only on
 * this bus and send only to its own dead-letter queue; only that pipe may assume it. A batch a pipe
 * gives up on is not lost: Pipes sends a record of it (shard, sequence numbers) to the pipe's
 * dead-letter queue, whose depth raises an alarm (infra/constructs/observability.ts). The
 * function's role has no data access at all.
 */
export class ChangeFeed extends Construct {
  readonly enrichment: HarvesterFunction;
  readonly pipes: pipes.CfnPipe[];
  readonly roles: iam.Role[];
  /** Each pipe's dead-letter queue, by the pipe's short name (`Changed`, `Tombstoned`). */
  readonly deadLetterQueues: Record<string, sqs.Queue> = {};

  constructor(scope: Construct, id: string, props: ChangeFeedProps) {
    super(scope, id);
    const streamArn = props.items.tableStreamArn;
    if (!streamArn) throw new Error('the change feed needs a stream on the Items table');
    this.enrichment = new HarvesterFunction(this, 'Enrichment', {
      entry: 'change-feed',
      description: 'Shapes Items stream records into Entity Changed / Entity Tombstoned events',
      timeoutSeconds: 30,
      environment: { CHANGE_FEED_INCLUDES_DATA: String(props.includeData) },
      tracing: props.tracing,
      removalPolicy: props.removalPolicy,
    });
    this.pipes = [];
    this.roles = [];
    const stack = Stack.of(this);
    for (const [lastWrite, detailType] of Object.entries(PUBLISHED_WRITES) as [
      keyof typeof PUBLISHED_WRITES,
      string,
    ][]) {
      const name = lastWrite === 'changed' ? 'Changed' : 'Tombstoned';
      // Named at synth time so the role's trust policy can name the pipe without a reference
      // cycle (the pipe already refers to the role).
      const pipeName = `${Names.uniqueResourceName(this, { maxLength: 64 - name.length - 1 })}-${name}`;
      const pipeArn = stack.formatArn({ service: 'pipes', resource: 'pipe', resourceName: pipeName });
      const role = new iam.Role(this, `${name}PipeRole`, {
        // Confused-deputy guard: only this pipe, in this account, may assume the role.
        assumedBy: new iam.ServicePrincipal('pipes.amazonaws.com', {
          conditions: {
            StringEquals: { 'aws:SourceAccount': stack.account },
            ArnEquals: { 'aws:SourceArn': pipeArn },
          },
        }),
        description: `Role of the change feed's ${detailType} pipe`,
      });
      const dlq = new sqs.Queue(this, `${name}PipeDlq`, {
        retentionPeriod: DLQ_RETENTION,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      Validations.of(dlq).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is itself the dead-letter target of a change-feed pipe; its depth alarm is the signal, there is nothing further to redrive to.',
      });
      this.deadLetterQueues[name] = dlq;
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          resources: [streamArn],
        }),
      );
      // ListStreams has no resource-level permission: IAM accepts it only on "*".
      role.addToPolicy(new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['lambda:InvokeFunction'],
          resources: [this.enrichment.fn.functionArn],
        }),
      );
      role.addToPolicy(
        new iam.PolicyStatement({ actions: ['events:PutEvents'], resources: [props.bus.eventBusArn] }),
      );
      // Pipes only sends to its dead-letter target; grantSendMessages would add queue reads.
      role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [dlq.queueArn] }));
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'dynamodb:ListStreams does not support resource-level permissions; every other action is scoped.',
      });
      this.roles.push(role);
      this.pipes.push(
        new pipes.CfnPipe(this, `${name}Pipe`, {
          name: pipeName,
          roleArn: role.roleArn,
          description: `Items stream → ${detailType} on the Harvester bus`,
          source: streamArn,
          sourceParameters: {
            dynamoDbStreamParameters: {
              startingPosition: 'LATEST',
              batchSize: BATCH_SIZE,
              // A batch the enrichment or the bus refuses is split to find the bad record.
              maximumRetryAttempts: MAXIMUM_RETRY_ATTEMPTS,
              onPartialBatchItemFailure: 'AUTOMATIC_BISECT',
              deadLetterConfig: { arn: dlq.queueArn },
            },
            filterCriteria: { filters: [{ pattern: JSON.stringify(streamFilterPattern(lastWrite)) }] },
          },
          enrichment: this.enrichment.fn.functionArn,
          target: props.bus.eventBusArn,
          targetParameters: { eventBridgeEventBusParameters: { detailType, source: EVENT_SOURCE } },
        }),
      );
    }
  }
}
