import { Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import {
  emittedDimensions,
  METRIC,
  type METRIC_CATALOG,
  METRICS_NAMESPACE,
  type MetricName,
} from '../../lib/observability/metrics.js';
import { SERVICE_NAME } from '../settings.js';

/**
 * The dashboard's widgets. Every Harvester metric is drawn with the dimension set the code emits
 * it with (METRIC_CATALOG in lib/observability/metrics.ts): CloudWatch matches dimensions exactly,
 * so a metric the code emits per `Kind` has no series under `service` alone.
 */

const FIVE_MINUTES = Duration.minutes(5);

/** A metric the code emits with `service` alone: one series, fit for an alarm. */
export type PlainMetricName = {
  [N in MetricName]: (typeof METRIC_CATALOG)[N]['dimensions'] extends readonly [] ? N : never;
}[MetricName];

/**
 * A Harvester EMF metric emitted with `service` alone (Powertools adds it to every metric, from
 * POWERTOOLS_SERVICE_NAME), summed per period unless told otherwise.
 */
export function emfMetric(
  metricName: PlainMetricName,
  statistic: string = cw.Stats.SUM,
  period = FIVE_MINUTES,
): cw.Metric {
  return new cw.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: SERVICE_NAME },
    statistic,
    period,
  });
}

/**
 * Any Harvester metric on a graph: a plain one as {@link emfMetric}, one with more dimensions as a
 * SEARCH over its exact dimension set, so each value (each `Kind`, `Reason`…) is its own line and
 * a value the code starts emitting later shows up without a deploy.
 */
export function emfSeries(metricName: MetricName, statistic: string = cw.Stats.SUM): cw.IMetric {
  const dimensions = emittedDimensions(metricName);
  if (dimensions.length === 1) return emfMetric(metricName as PlainMetricName, statistic);
  const schema = [METRICS_NAMESPACE, ...dimensions].join(',');
  return new cw.MathExpression({
    expression: `SEARCH('{${schema}} MetricName="${metricName}"', '${statistic}', ${FIVE_MINUTES.toSeconds()})`,
    label: `${metricName} by ${dimensions.slice(1).join(', ')}`,
    period: FIVE_MINUTES,
  });
}

/** Pages, items, retries, deferrals, dead letters, runs and rate budgets. */
export function runWidgets(): cw.IWidget[] {
  return [
    new cw.GraphWidget({
      title: 'Pages; items loaded and tombstoned',
      width: 8,
      left: [emfSeries(METRIC.pagesCommitted)],
      right: [emfSeries(METRIC.itemsLoaded), emfSeries(METRIC.tombstoned)],
    }),
    new cw.GraphWidget({ title: 'Retries by error class', width: 8, left: [emfSeries(METRIC.retries)] }),
    new cw.GraphWidget({ title: 'Deferrals', width: 8, left: [emfSeries(METRIC.deferrals)] }),
    new cw.GraphWidget({
      title: 'DynamoDB requests refused for their shape (a defect: each fails its page)',
      width: 8,
      left: [emfSeries(METRIC.requestsRefused)],
    }),
    new cw.GraphWidget({
      title: 'Run events not written, by type (the runs went on)',
      width: 8,
      left: [emfSeries(METRIC.runEventsLost)],
    }),
    new cw.GraphWidget({ title: 'Dead letters by kind', width: 8, left: [emfSeries(METRIC.deadLetters)] }),
    new cw.GraphWidget({
      title: 'Dropped messages by reason',
      width: 8,
      left: [emfSeries(METRIC.droppedMessages)],
    }),
    new cw.GraphWidget({
      title: 'Pages sent again by reason',
      width: 8,
      left: [emfSeries(METRIC.pagesResent)],
    }),
    new cw.GraphWidget({
      title: 'Runs ended',
      width: 8,
      left: [emfSeries(METRIC.runsSucceeded), emfSeries(METRIC.runsFailed), emfSeries(METRIC.runsShort)],
    }),
    new cw.GraphWidget({ title: 'Runs resumed by verdict', width: 8, left: [emfSeries(METRIC.runsResumed)] }),
    new cw.GraphWidget({
      title: 'Run duration (s)',
      width: 8,
      left: [
        emfSeries(METRIC.runDurationSeconds, 'p50'),
        emfSeries(METRIC.runDurationSeconds, 'p90'),
        emfSeries(METRIC.runDurationSeconds, cw.Stats.MAXIMUM),
      ],
    }),
    new cw.GraphWidget({
      title: 'Rate budgets: requests that waited, refusals by the source',
      width: 12,
      left: [emfSeries(METRIC.budgetWaits), emfSeries(METRIC.budgetRejected)],
    }),
    new cw.GraphWidget({
      title: 'Rate budgets: seconds waited',
      width: 12,
      left: [emfSeries(METRIC.budgetWaitSeconds)],
    }),
  ];
}

/** Page queue and DLQ depth, and what the reaper sees waiting. */
export function queueWidgets(pageQueue: sqs.IQueue, pageDlq: sqs.IQueue): cw.IWidget[] {
  return [
    new cw.GraphWidget({
      title: 'Page queue depth',
      width: 8,
      left: [
        pageQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
        pageQueue.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum' }),
        pageQueue.metricApproximateNumberOfMessagesDelayed({ statistic: 'Maximum' }),
      ],
      right: [pageQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' })],
    }),
    new cw.GraphWidget({
      title: 'Runs waiting for a worker (reaper)',
      width: 8,
      left: [emfSeries(METRIC.runsWaiting, cw.Stats.MAXIMUM)],
      right: [emfSeries(METRIC.oldestWaitSeconds, cw.Stats.MAXIMUM)],
    }),
    new cw.GraphWidget({
      title: 'Page DLQ depth',
      width: 8,
      left: [pageDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' })],
      right: [pageDlq.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' })],
    }),
  ];
}

/** The page worker's invocations, and the admin API's errors and latency (AWS/ApiGateway by ApiId). */
export function serviceWidgets(worker: lambda.IFunction, api: apigw.IHttpApi): cw.IWidget[] {
  return [
    new cw.GraphWidget({
      title: 'Page worker',
      width: 12,
      left: [worker.metricInvocations(), worker.metricErrors(), worker.metricThrottles()],
      right: [worker.metric('ConcurrentExecutions', { statistic: 'Maximum' })],
    }),
    new cw.GraphWidget({
      title: 'Admin API: 4xx and 5xx answers, latency (ms)',
      width: 12,
      left: [
        api.metricClientError({ statistic: cw.Stats.SUM, period: FIVE_MINUTES }),
        api.metricServerError({ statistic: cw.Stats.SUM, period: FIVE_MINUTES }),
      ],
      right: [
        api.metricLatency({ statistic: 'p50', period: FIVE_MINUTES }),
        api.metricLatency({ statistic: 'p99', period: FIVE_MINUTES }),
      ],
    }),
  ];
}

/**
 * The per-source view: from the functions' JSON logs (every engine line carries `sourceId`), not
 * from metrics, since a custom metric per source would be billed per source.
 */
export function perSourceWidgets(logGroups: readonly logs.ILogGroup[]): cw.IWidget[] {
  const logGroupNames = logGroups.map((group) => group.logGroupName);
  return [
    new cw.LogQueryWidget({
      title: 'By source: log lines, warnings, errors',
      width: 12,
      height: 8,
      logGroupNames,
      queryLines: [
        'filter ispresent(sourceId)',
        'stats count(*) as lines, sum(strcontains(level, "WARN")) as warnings, sum(strcontains(level, "ERROR")) as errors by sourceId',
        'sort errors desc, warnings desc, lines desc',
        'limit 50',
      ],
    }),
    new cw.LogQueryWidget({
      title: 'By source: runs ended, items processed, dead letters',
      width: 12,
      height: 8,
      logGroupNames,
      queryLines: [
        'filter message = "run ended"',
        'stats count(*) as runs, sum(strcontains(state, "failed")) as failed, sum(processed) as processed, sum(errorCount) as deadLetters by sourceId',
        'sort failed desc, runs desc',
        'limit 50',
      ],
    }),
  ];
}
