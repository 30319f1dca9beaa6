import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RuntimeEnvironment } from '../runtime-environment.js';
import { FUNCTION_TIMEOUT_SECONDS } from '../settings.js';
import type { DataTables } from './data-tables.js';
import { HarvesterFunction } from './harvester-function.js';
import type { Messaging } from './messaging.js';

/** Props of {@link Scheduling}. */
export interface SchedulingProps {
  readonly tables: DataTables;
  readonly messaging: Messaging;
  /** Environment of the functions created here (see `baseEnvironment`). */
  readonly environment: (scheduleGroupName: string) => RuntimeEnvironment;
  readonly tracing: boolean;
  /** Removal policy of the log groups, in step with the tables'. */
  readonly removalPolicy: RemovalPolicy;
}

/** Schedule operations a function may perform in the Harvester schedule group. */
export type ScheduleAction = 'Create' | 'Update' | 'Delete' | 'Get';

/**
 * Harvester's clocks: the schedule group that holds deferred-page and per-source
 * schedules, the role EventBridge Scheduler assumes to run them, the start-run function that
 * recurring source schedules invoke, and the reaper with its `rate(1 minute)` schedule.
 *
 * The reaper's schedule lives in the default group on purpose: functions may create and delete
 * schedules in the Harvester group, and none of them can ever delete the reaper's clock.
 */
export class Scheduling extends Construct {
  readonly group: scheduler.ScheduleGroup;
  /** Role that Scheduler assumes: sends deferred pages to the page queue, invokes start-run. */
  readonly schedulerRole: iam.Role;
  readonly startRun: HarvesterFunction;
  /** Scheduled starts that failed after Lambda's retries (an alarm watches it). */
  readonly startRunDlq: sqs.Queue;
  readonly reaper: HarvesterFunction;
  readonly reaperSchedule: scheduler.Schedule;

  constructor(scope: Construct, id: string, props: SchedulingProps) {
    super(scope, id);
    const { tables, messaging } = props;
    // Always deleted with the stack: its schedules target this stack's functions, so a retained
    // group would keep schedules aimed at deleted functions, and its name (derived from the
    // construct path) would make the next deploy of the same stack fail with AlreadyExists. The
    // schedules are derived data: each source row keeps its schedule definitions (README: Operating).
    this.group = new scheduler.ScheduleGroup(this, 'Group', { removalPolicy: RemovalPolicy.DESTROY });
    const environment = props.environment(this.group.scheduleGroupName);
    const common = { environment, tracing: props.tracing, removalPolicy: props.removalPolicy };

    // Scheduler invokes start-run asynchronously: after Lambda's own retries a failed start would
    // vanish. It lands here instead, with the request and the error, for 14 days; so does a start
    // Scheduler itself could not deliver (source schedules name this queue as their DLQ).
    this.startRunDlq = new sqs.Queue(this, 'StartRunDlq', {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.startRunDlq).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the start-run function (Lambda on-failure ' +
        'destination); its depth alarm (StartRunFailed) is the signal, there is nothing further to redrive to.',
    });
    this.startRun = new HarvesterFunction(this, 'StartRun', {
      ...common,
      entry: 'start-run',
      description: 'Harvester: starts a run when a source schedule fires',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.startRun,
      onFailure: new SqsDestination(this.startRunDlq),
    });
    tables.grantData(this.startRun.role, 'syncRuns', 'readWrite');
    // Reads the source and takes its lock; nothing else on Sources.
    tables.grantSourceLock(this.startRun.role, { watermark: false });
    messaging.pageQueue.grantSendMessages(this.startRun.role);

    this.schedulerRole = new iam.Role(this, 'SchedulerRole', {
      description: 'Assumed by EventBridge Scheduler for Harvester deferred pages and source schedules',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        // Confused-deputy guard: only schedules of the Harvester group in this account. Scheduler sets
        // aws:SourceArn to the schedule *group* ARN, never to a schedule's.
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID, 'aws:SourceArn': this.group.scheduleGroupArn },
        },
      }),
    });
    messaging.pageQueue.grantSendMessages(this.schedulerRole);
    this.startRun.grantInvokeTo(this.schedulerRole);
    // A start Scheduler could not deliver (invoke refused or throttled past its retries) lands in
    // the same DLQ as one the function failed: one place, one alarm.
    this.startRunDlq.grantSendMessages(this.schedulerRole);

    this.reaper = new HarvesterFunction(this, 'Reaper', {
      ...common,
      entry: 'reaper',
      description: 'Harvester: every minute, resumes, restarts or fails runs whose heartbeat went silent',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.reaper,
      // A failed tick is superseded by the next one a minute later; an async retry would only overlap it.
      asyncRetryAttempts: 0,
    });
    tables.grantData(this.reaper.role, 'syncRuns', 'readWrite');
    // Reads sources (reconfigured? gone?) and releases locks of the runs it ends.
    tables.grantSourceLock(this.reaper.role, { watermark: true });
    tables.grantData(this.reaper.role, 'deadLetters', 'readWrite');
    messaging.pageQueue.grantSendMessages(this.reaper.role);
    messaging.bus.grantPutEventsTo(this.reaper.role);

    const reaperScheduleRole = new iam.Role(this, 'ReaperScheduleRole', {
      description: 'Assumed by EventBridge Scheduler to invoke the Harvester reaper',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': Aws.ACCOUNT_ID,
            'aws:SourceArn': Stack.of(this).formatArn({
              service: 'scheduler',
              resource: 'schedule-group',
              resourceName: 'default',
            }),
          },
        },
      }),
    });
    this.reaper.grantInvokeTo(reaperScheduleRole);
    this.reaperSchedule = new scheduler.Schedule(this, 'ReaperSchedule', {
      description: 'Harvester reaper tick',
      schedule: scheduler.ScheduleExpression.rate(Duration.minutes(1)),
      timeWindow: scheduler.TimeWindow.off(),
      target: new LambdaInvoke(this.reaper.fn, {
        // A tick older than a minute is stale: the next one is already due.
        maxEventAge: Duration.minutes(1),
        retryAttempts: 2,
        role: reaperScheduleRole,
      }),
    });
  }

  /**
   * Grants schedule operations in the Harvester group, and `iam:PassRole` on the Scheduler role
   * (restricted to Scheduler) whenever the function may create or update schedules.
   */
  grantSchedules(fn: HarvesterFunction, actions: readonly ScheduleAction[]): void {
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: actions.map((action) => `scheduler:${action}Schedule`),
        resources: [this.scheduleArnPattern()],
      }),
    );
    const group = this.group.scheduleGroupName;
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${group}/*]`,
      reason:
        'Schedule names are chosen at runtime (deterministic per deferred page or per source); the ' +
        `wildcard is confined to the Harvester schedule group "${group}", which holds nothing else.`,
    });
    if (actions.includes('Create') || actions.includes('Update')) {
      fn.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [this.schedulerRole.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
        }),
      );
    }
  }

  /**
   * Lets `fn` list schedules (the API reconciles a source's schedules by name prefix).
   * ListSchedules has no resource-level permissions, so it is granted on `*`.
   */
  grantListSchedules(fn: HarvesterFunction): void {
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['scheduler:ListSchedules'], resources: ['*'] }),
    );
    Validations.of(fn.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'scheduler:ListSchedules supports no resource-level permissions (it is authorized on "*" only). Its ' +
        "summaries reveal schedule names, states, groups and target ARNs of the account's schedules, but never " +
        'their inputs or roles; the API lists only the Harvester group (GroupName) and only to reconcile or delete its own.',
    });
  }

  /** ARN pattern of every schedule in the Harvester group. */
  private scheduleArnPattern(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.group.scheduleGroupName}/*`,
    });
  }
}
