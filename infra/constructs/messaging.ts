import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PAGE_QUEUE } from '../../lib/resources/definitions.js';
import { FUNCTION_TIMEOUT_SECONDS } from '../settings.js';

/**
 * Visibility timeout of the page DLQ. The drain reads it through an event source mapping, and Lambda
 * requires the queue's visibility timeout to be at least the function timeout; six times, as for the
 * page queue, so a slow drain is not handed the same message twice.
 */
export const PAGE_DLQ_VISIBILITY_SECONDS = 6 * FUNCTION_TIMEOUT_SECONDS.drain;

/**
 * The page queue with its dead-letter queue (attributes from `PAGE_QUEUE` in
 * lib/resources/definitions.ts), and the Harvester EventBridge bus that carries run outcomes.
 *
 * Both queues use SQS-managed encryption (no key policy to maintain; EventBridge Scheduler can send
 * deferred pages without KMS grants) and refuse plain-HTTP requests. The DLQ has no DLQ of its own:
 * a message the drain cannot handle stays there for 14 days and keeps the DLQ-depth alarm firing.
 */
export class Messaging extends Construct {
  readonly pageQueue: sqs.Queue;
  readonly pageDlq: sqs.Queue;
  readonly bus: events.EventBus;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.pageDlq = new sqs.Queue(this, 'PageDlq', {
      retentionPeriod: Duration.seconds(PAGE_QUEUE.dlqRetentionSeconds),
      visibilityTimeout: Duration.seconds(PAGE_DLQ_VISIBILITY_SECONDS),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });

    this.pageQueue = new sqs.Queue(this, 'PageQueue', {
      visibilityTimeout: Duration.seconds(PAGE_QUEUE.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(PAGE_QUEUE.messageRetentionSeconds),
      deadLetterQueue: { queue: this.pageDlq, maxReceiveCount: PAGE_QUEUE.maxReceiveCount },
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });

    this.bus = new events.EventBus(this, 'Bus', {
      description: 'Harvester run outcomes (source "harvester"): the platform notifier subscribes here.',
    });
  }
}
