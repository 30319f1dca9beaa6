import { Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC } from '../../lib/observability/metrics.js';
import {
  emfMetric,
  perSourceWidgets,
  queueWidgets,
  runWidgets,
  serviceWidgets,
} from './dashboard-widgets.js';

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
  /** The functions' log groups, for the dashboard's per-source Logs Insights view. */
  readonly logGroups: readonly logs.ILogGroup[];
  /** The change feed's pipe dead-letter queues by pipe name (`Changed`, `Tombstoned`), when the feed is on. */
  readonly changeFeedDlqs?: Readonly<Record<string, sqs.IQueue>>;
}

/**
 * Alarms on the signals that need an operator — poison pages in the DLQ, a failing reaper (stuck runs
 * would never be reclaimed), failed runs, a crashing or throttled worker — all sent to the
 * notification topic; and one dashboard: every metric the code emits, drawn by the dimension set it
 * is emitted with (infra/constructs/dashboard-widgets.ts), queue depths, the admin API's errors and
 * latency, and a per-source view from the logs.
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
      metric: emfMetric(METRIC.runsFailed),
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
      metric: emfMetric(METRIC.oldestWaitSeconds, cw.Stats.MAXIMUM, minute),
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
    this.dashboard.addWidgets(...runWidgets());
    this.dashboard.addWidgets(...queueWidgets(props.pageQueue, props.pageDlq));
    this.dashboard.addWidgets(...serviceWidgets(props.worker, props.api));
    this.dashboard.addWidgets(...perSourceWidgets(props.logGroups));
    this.dashboard.addWidgets(new cw.AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: this.alarms }));
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
}
