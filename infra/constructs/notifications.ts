import type { RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/** The run outcomes an operator is told about (DESIGN §9): events with source `harvester`. */
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
 * shared with EventBridge and CloudWatch, which both publish here; the key policy admits exactly
 * those two services (through `grantPublish`).
 */
export class Notifications extends Construct {
  readonly key: kms.Key;
  readonly topic: sns.Topic;
  readonly runOutcomeRule: events.Rule;

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
    this.topic.grantPublish(new iam.ServicePrincipal('cloudwatch.amazonaws.com'));

    this.runOutcomeRule = new events.Rule(this, 'RunOutcomeRule', {
      description: 'Harvester runs that failed or finished with dead letters',
      eventBus: props.bus,
      eventPattern: { source: ['harvester'], detailType: [...NOTIFIED_DETAIL_TYPES] },
    });
    this.runOutcomeRule.addTarget(new SnsTopic(this.topic));
  }
}
