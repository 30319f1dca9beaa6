import { Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, type MetricName } from '../../lib/observability/metrics.js';
import { SERVICE_NAME } from '../settings.js';

/**
 * Powertools Metrics adds the `service` dimension (POWERTOOLS_SERVICE_NAME) to every metric it
 * emits, and CloudWatch matches dimensions exactly: alarms must name it too.
 */
const SERVICE_DIMENSION = { service: SERVICE_NAME };

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  readonly topic: sns.ITopic;
  readonly pageQueue: sqs.IQueue;
  readonly pageDlq: sqs.IQueue;
  readonly worker: lambda.IFunction;
  readonly reaper: lambda.IFunction;
  readonly drain: lambda.IFunction;
  /** Scheduled starts that failed after Lambda's retries. */
  readonly startRunDlq: sqs.IQueue;
  readonly api: apigw.IHttpApi;
  /** The change feed's pipe dead-letter queues by pipe name (`Changed`, `Tombstoned`), when the feed is on. */
  readonly changeFeedDlqs?: Readonly<Record<string, sqs.IQueue>>;
}

/** A Harvester EMF metric, summed per period unless told otherwise. */
function emf(metricName: MetricName, statistic = cw.Stats.SUM, period = Duration.minutes(5)): cw.Metric {
  return new cw.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: SERVICE_DIMENSION,
    statistic,
    period,
  });
}

/**
 * Alarms on the signals that need an operator — poison pages in the DLQ, a failing reaper (stuck runs
 * would never be reclaimed), failed runs, a crashing or throttled worker — all sent to the
 * notification topic; and one dashboard with the run metrics and queue depths.
 */
export class Observability extends Construct {
  readonly alarms: cw.Alarm[] = [];
  readonly dashboard: cw.Dashboard;
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    this.action = new SnsAction(props.topic);
    const minute = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);

    this.alarm('PageDlqNotEmpty', {
      alarmDescription: 'Page messages failed repeatedly and reached the page DLQ (poison pages).',
      metric: props.pageDlq.metricApproximateNumberOfMessagesVisible({
        period: minute,
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
    this.alarm('ReaperErrors', {
      alarmDescription: 'The reaper failed on 3 of the last 5 ticks: silent runs are not being reclaimed.',
      metric: props.reaper.metricErrors({ period: minute }),
      threshold: 1,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    });
    this.alarm('RunsFailed', {
      alarmDescription: 'At least one sync run ended failed (Powertools metric Harvester/RunsFailed).',
      metric: emf(METRIC.runsFailed),
      threshold: 1,
      evaluationPeriods: 1,
    });
    this.alarm('WorkerErrors', {
      alarmDescription:
        'Page worker invocations crashed or timed out (not item failures: those are dead letters).',
      metric: props.worker.metricErrors({ period: fiveMinutes }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    this.alarm('WorkerThrottles', {
      alarmDescription:
        'The page worker was throttled: account concurrency is exhausted below the ESM bound.',
      metric: props.worker.metricThrottles({ period: fiveMinutes }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    this.alarm('QueueBacklog', {
      alarmDescription:
        "A run's next page has waited over 10 minutes for a worker (reaper metric OldestWaitSeconds): the page queue is backlogged. Runs wait, they are not restarted.",
      metric: emf(METRIC.oldestWaitSeconds, cw.Stats.MAXIMUM, minute),
      threshold: 600,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
    });
    this.alarm('DrainErrors', {
      alarmDescription:
        'The DLQ drain is failing: poison pages stay in the DLQ and their runs are not settled.',
      metric: props.drain.metricErrors({ period: fiveMinutes }),
      threshold: 1,
      evaluationPeriods: 1,
    });

    this.alarm('StartRunFailed', {
      alarmDescription:
        'A scheduled start failed after its retries and is in the start-run DLQ: a source schedule did not start its run.',
      metric: props.startRunDlq.metricApproximateNumberOfMessagesVisible({
        period: minute,
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
    this.alarm('ApiServerErrors', {
      alarmDescription:
        'The admin API answered 5xx (a handler error or timeout); the access log and the API function log carry the request id.',
      metric: props.api.metricServerError({ period: fiveMinutes, statistic: cw.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: 1,
    });

    for (const [pipe, dlq] of Object.entries(props.changeFeedDlqs ?? {}))
      this.alarm(`ChangeFeed${pipe}DlqNotEmpty`, {
        alarmDescription: `The change feed's ${pipe} pipe gave up on a batch of Items stream records: its events were not published. The DLQ message names the shard and sequence numbers; docs/items.md says how to recover.`,
        metric: dlq.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' }),
        threshold: 0,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
      });

    this.dashboard = new cw.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(...this.runWidgets());
    this.dashboard.addWidgets(...this.queueWidgets(props));
    this.dashboard.addWidgets(
      new cw.GraphWidget({
        title: 'Page worker',
        width: 12,
        left: [props.worker.metricInvocations(), props.worker.metricErrors(), props.worker.metricThrottles()],
        right: [props.worker.metric('ConcurrentExecutions', { statistic: 'Maximum' })],
      }),
      new cw.AlarmStatusWidget({ title: 'Alarms', width: 12, alarms: this.alarms }),
    );
  }

  /** Creates an alarm that notifies the topic; missing data is healthy (EMF and DLQ metrics are sparse). */
  private alarm(id: string, props: Omit<cw.AlarmProps, 'treatMissingData'>): cw.Alarm {
    const alarm = new cw.Alarm(this, id, {
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...props,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.action);
    this.alarms.push(alarm);
    return alarm;
  }

  private runWidgets(): cw.IWidget[] {
    const retriesByClass = new cw.MathExpression({
      // A free-text search rather than a {schema}: one line per ErrorClass, whatever other
      // dimensions Powertools attaches to the single metric.
      expression: `SEARCH('Namespace="${METRICS_NAMESPACE}" MetricName="${METRIC.retries}"', 'Sum', 300)`,
      label: 'Retries',
      period: Duration.minutes(5),
    });
    return [
      new cw.GraphWidget({
        title: 'Pages and items',
        width: 8,
        left: [emf(METRIC.pagesCommitted)],
        right: [emf(METRIC.itemsLoaded)],
      }),
      new cw.GraphWidget({ title: 'Retries by error class', width: 8, left: [retriesByClass] }),
      new cw.GraphWidget({
        title: 'Deferrals, dead letters, dropped messages',
        width: 8,
        left: [emf(METRIC.deferrals), emf(METRIC.deadLetters), emf(METRIC.droppedMessages)],
      }),
      new cw.GraphWidget({
        title: 'Runs',
        width: 12,
        left: [emf(METRIC.runsSucceeded), emf(METRIC.runsFailed), emf(METRIC.runsResumed)],
      }),
      new cw.GraphWidget({
        title: 'Run duration (s)',
        width: 12,
        left: [
          emf('RunDurationSeconds', 'p50'),
          emf('RunDurationSeconds', 'p90'),
          emf('RunDurationSeconds', 'Maximum'),
        ],
      }),
      new cw.GraphWidget({
        title: 'Rate budgets: requests that waited, refusals by the source',
        width: 12,
        left: [emf(METRIC.budgetWaits), emf(METRIC.budgetRejected)],
      }),
      new cw.GraphWidget({
        title: 'Rate budgets: seconds waited',
        width: 12,
        left: [emf(METRIC.budgetWaitSeconds)],
      }),
    ];
  }

  private queueWidgets(props: ObservabilityProps): cw.IWidget[] {
    const { pageQueue, pageDlq } = props;
    return [
      new cw.GraphWidget({
        title: 'Page queue depth',
        width: 12,
        left: [
          pageQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
          pageQueue.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum' }),
          pageQueue.metricApproximateNumberOfMessagesDelayed({ statistic: 'Maximum' }),
        ],
        right: [pageQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' })],
      }),
      new cw.GraphWidget({
        title: 'Page DLQ depth',
        width: 12,
        left: [pageDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' })],
        right: [pageDlq.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' })],
      }),
    ];
  }
}
