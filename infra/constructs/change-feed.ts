import { type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as pipes from 'aws-cdk-lib/aws-pipes';
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
 * The change feed on AWS: two EventBridge Pipes read the Items table's stream, each keeping the
 * writes of one kind (`lastWrite` = `changed` or `tombstoned`, lib/events/change-feed.ts), shape
 * them in one enrichment function, and put them on the Harvester bus as `Entity Changed` or
 * `Entity Tombstoned`. Two pipes, because a pipe's detail type is fixed; they are the stream's
 * two readers (DynamoDB serves at most two per shard without throttling), so other consumers
 * subscribe to the bus, not the stream.
 *
 * Each pipe's role may read only this stream, invoke only the enrichment function and put only
 * on this bus; the function's role has no data access at all.
 */
export class ChangeFeed extends Construct {
  readonly enrichment: HarvesterFunction;
  readonly pipes: pipes.CfnPipe[];
  readonly roles: iam.Role[];

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
    for (const [lastWrite, detailType] of Object.entries(PUBLISHED_WRITES) as [
      keyof typeof PUBLISHED_WRITES,
      string,
    ][]) {
      const name = lastWrite === 'changed' ? 'Changed' : 'Tombstoned';
      const role = new iam.Role(this, `${name}PipeRole`, {
        assumedBy: new iam.ServicePrincipal('pipes.amazonaws.com', {
          conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
        }),
        description: `Role of the change feed's ${detailType} pipe`,
      });
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
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'dynamodb:ListStreams does not support resource-level permissions; every other action is scoped.',
      });
      this.roles.push(role);
      this.pipes.push(
        new pipes.CfnPipe(this, `${name}Pipe`, {
          roleArn: role.roleArn,
          description: `Items stream → ${detailType} on the Harvester bus`,
          source: streamArn,
          sourceParameters: {
            dynamoDbStreamParameters: {
              startingPosition: 'LATEST',
              batchSize: BATCH_SIZE,
              // A batch the enrichment or the bus refuses is split to find the bad record.
              maximumRetryAttempts: 10,
              onPartialBatchItemFailure: 'AUTOMATIC_BISECT',
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
