import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import type { RuntimeEnvironment } from '../runtime-environment.js';
import { FUNCTION_TIMEOUT_SECONDS } from '../settings.js';
import type { DataTables } from './data-tables.js';
import { HarvesterFunction } from './harvester-function.js';
import type { Messaging } from './messaging.js';
import type { Scheduling } from './scheduling.js';
import { grantSourceBuckets } from './source-buckets.js';

/**
 * Messages per page-worker invocation. One: the worker's timeout is derived for the worst retry
 * stretch of a single page (lib/config/constants.ts), so a second page in the batch could run out
 * of time; pages of one run are strictly sequential anyway (each commit enqueues the next), so
 * batching would add no throughput, only a shared timeout and a shared failure blast radius.
 */
export const WORKER_BATCH_SIZE = 1;

/** Messages per drain invocation: dead-lettering is a few small writes per message. */
export const DRAIN_BATCH_SIZE = 10;

/** Props of {@link PagePipeline}. */
export interface PagePipelineProps {
  readonly tables: DataTables;
  readonly messaging: Messaging;
  readonly scheduling: Scheduling;
  readonly environment: RuntimeEnvironment;
  /** ESM `MaximumConcurrency` of the worker: the bound on concurrent page fetches. */
  readonly workerMaxConcurrency: number;
  /** Secrets every source may use besides its own (the stack setting `sharedSecretRefs`). */
  readonly sharedSecretRefs: readonly string[];
  /** Buckets `s3-objects` sources may read (the stack setting `sourceBuckets`). Default none. */
  readonly sourceBuckets?: readonly string[];
  readonly tracing: boolean;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The page path of a run: the page worker fed by the page queue, and the drain fed by
 * the page DLQ. Both mappings report partial batch failures, so one bad message never redelivers
 * its neighbours.
 */
export class PagePipeline extends Construct {
  readonly worker: HarvesterFunction;
  readonly drain: HarvesterFunction;

  constructor(scope: Construct, id: string, props: PagePipelineProps) {
    super(scope, id);
    const { tables, messaging, scheduling } = props;
    const common = { tracing: props.tracing, removalPolicy: props.removalPolicy };

    this.worker = new HarvesterFunction(this, 'Worker', {
      ...common,
      entry: 'page-worker',
      description: 'Harvester: fetches, loads and commits one page, then enqueues the next',
      environment: { ...props.environment, SCHEDULER_ROLE_ARN: scheduling.schedulerRole.roleArn },
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.worker,
      memorySize: 512,
      // The worker re-enqueues itself through the page queue; Lambda would stop the chain after 16
      // hops. The loop is bounded instead by MAX_PAGES_PER_RUN, cancel and the ESM concurrency.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    this.worker.fn.addEventSource(
      new SqsEventSource(messaging.pageQueue, {
        batchSize: WORKER_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: props.workerMaxConcurrency,
      }),
    );
    const worker = this.worker.role;
    tables.grantData(worker, 'syncRuns', 'readWrite');
    tables.grantData(worker, 'items', 'readWrite');
    tables.grantData(worker, 'deadLetters', 'readWrite');
    // Every source request takes from (and settles with) its credential's rate budget: a read
    // and a conditional put of one record, nothing else.
    tables.rateBudgets.grant(worker, 'dynamodb:GetItem', 'dynamodb:PutItem');
    // Finishing a run releases the source's active-run lock and moves its watermark.
    tables.grantSourceLock(worker, { watermark: true });
    messaging.pageQueue.grantSendMessages(worker);
    messaging.bus.grantPutEventsTo(worker);
    // Deferrals beyond 900 s: a one-time schedule per page, which deletes itself after it fired
    // (ActionAfterCompletion DELETE); cancel (the API) deletes the ones still pending.
    scheduling.grantSchedules(this.worker, ['Create']);
    this.worker.grantSecretReferences(props.sharedSecretRefs);
    grantSourceBuckets(this.worker, props.sourceBuckets ?? []);

    this.drain = new HarvesterFunction(this, 'Drain', {
      ...common,
      entry: 'dlq-drain',
      description: 'Harvester: turns poison page messages into dead_letters entries and settles the run',
      environment: props.environment,
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.drain,
    });
    this.drain.fn.addEventSource(
      new SqsEventSource(messaging.pageDlq, {
        batchSize: DRAIN_BATCH_SIZE,
        maxBatchingWindow: Duration.seconds(5),
        reportBatchItemFailures: true,
      }),
    );
    const drain = this.drain.role;
    tables.grantData(drain, 'syncRuns', 'readWrite');
    // Settling a run may end it: the source's lock is released (and a watermark committed).
    tables.grantSourceLock(drain, { watermark: true });
    tables.grantData(drain, 'deadLetters', 'readWrite');
    // Settling a run may continue it past the poison page or fail it (event on the bus).
    messaging.pageQueue.grantSendMessages(drain);
    messaging.bus.grantPutEventsTo(drain);
  }
}
