import { ArnFormat, Aws, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/** The run outcomes an operator is told about: events with source `harvester`. */
export const NOTIFIED_DETAIL_TYPES = ['SyncRun Failed', 'SyncRun Succeeded With Errors'] as const;

/** Props of {@link Notifications}. */
export interface NotificationsProps {
  readonly bus: events.IEventBus;
  /** RETAIN the key with protected data, so an encrypted topic's history is never orphaned early. */
  readonly keyRemovalPolicy: RemovalPolicy;
}

/**
 * The operator notification topic: run outcomes routed from the Harvester bus, and every alarm.
 *
 * The topic is encrypted with a customer-managed key because the AWS-managed SNS key cannot be
 * shared with EventBridge and CloudWatch, which both publish here. Neither service is admitted
 * without confused-deputy conditions: CloudWatch only for alarms of this account and region
 * (`aws:SourceAccount`, `aws:SourceArn`) in both the topic and the key policy; EventBridge
 * publishes through a role only rules on the Harvester bus of this account may assume.
 */
export class Notifications extends Construct {
  readonly key: kms.Key;
  readonly topic: sns.Topic;
  readonly runOutcomeRule: events.Rule;
  /** The role EventBridge publishes run outcomes with. */
  readonly publishRole: iam.Role;

  constructor(scope: Construct, id: string, props: NotificationsProps) {
    super(scope, id);
    this.key = new kms.Key(this, 'Key', {
      description: 'Harvester notification topic encryption',
      enableKeyRotation: true,
      removalPolicy: props.keyRemovalPolicy,
    });
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: 'Harvester notifications',
      masterKey: this.key,
      enforceSSL: true,
    });
    const stack = Stack.of(this);
    const fromAlarmsHere = {
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };
    const cloudwatch = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AlarmsOfThisAccountPublish',
        principals: [cloudwatch],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: fromAlarmsHere,
      }),
    );
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AlarmsOfThisAccountEncrypt',
        principals: [cloudwatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromAlarmsHere,
      }),
    );

    this.runOutcomeRule = new events.Rule(this, 'RunOutcomeRule', {
      description: 'Harvester runs that failed or finished with dead letters',
      eventBus: props.bus,
      eventPattern: { source: ['harvester'], detailType: [...NOTIFIED_DETAIL_TYPES] },
    });
    // A role rather than a topic-policy grant to all of EventBridge: only rules on the Harvester bus
    // of this account can assume it (the rule's own ARN would make a dependency cycle).
    this.publishRole = new iam.Role(this, 'RunOutcomePublishRole', {
      description: 'Assumed by EventBridge to publish Harvester run outcomes to the notification topic',
      assumedBy: new iam.ServicePrincipal('events.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'events',
              resource: 'rule',
              resourceName: `${props.bus.eventBusName}/*`,
            }),
          },
        },
      }),
    });
    this.runOutcomeRule.addTarget(new SnsTopic(this.topic, { role: this.publishRole }));
    Validations.of(this.publishRole).acknowledge({
      id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
      reason:
        'Added by topic.grantPublish for the encrypted topic: SNS needs GenerateDataKey (and its WithoutPlaintext ' +
        'variant) on the topic key; the statement is confined to that one key ARN.',
    });
  }
}
