import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/** Metric names published to CloudWatch (EMF) under the `Harvester` namespace; the dashboard reads these. */
export const METRIC = {
  pagesCommitted: 'PagesCommitted',
  itemsLoaded: 'ItemsLoaded',
  retries: 'Retries',
  deferrals: 'Deferrals',
  deadLetters: 'DeadLetters',
  droppedMessages: 'DroppedMessages',
  runsSucceeded: 'RunsSucceeded',
  runsFailed: 'RunsFailed',
  runsResumed: 'RunsResumed',
  runDurationSeconds: 'RunDurationSeconds',
  /** Runs whose expected page waits in the queue (or on a due deferral), counted by each reaper pass. */
  runsWaiting: 'RunsWaiting',
  /** The longest such wait, per reaper pass: the backlog signal the QueueBacklog alarm watches. */
  oldestWaitSeconds: 'OldestWaitSeconds',
  /** Expected pages sent again at the same epoch (a send lost after a commit, or a wait past the bound). */
  pagesResent: 'PagesResent',
  /** Source requests that waited for their credential's rate budget (slept or deferred). */
  budgetWaits: 'BudgetWaits',
  /** Seconds those requests waited (or were deferred for). */
  budgetWaitSeconds: 'BudgetWaitSeconds',
  /** Responses that refused a request for want of budget (403/429 naming a rate limit). */
  budgetRejected: 'BudgetRejected',
  /** Items a reconciliation tombstoned (absence confirmed at the source). */
  tombstoned: 'Tombstoned',
  /** DynamoDB requests refused for their shape (a code defect): each failed its page. */
  requestsRefused: 'RequestsRefused',
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

export const METRICS_NAMESPACE = 'Harvester';

/** The Powertools service name of every log line, metric and trace. */
export const SERVICE_NAME = 'harvester';

/** The engine's view of metrics: counts with an optional dimension, published once per invocation. */
export interface EngineMetrics {
  count(name: MetricName, value?: number, dimension?: { name: string; value: string }): void;
  seconds(name: MetricName, value: number): void;
  flush(): void;
}

/** Metrics that go nowhere (tests, the local runtime unless asked). */
export const noMetrics: EngineMetrics = { count() {}, seconds() {}, flush() {} };

/**
 * Powertools EMF metrics: each flush writes one structured log line CloudWatch turns into
 * metrics. In a Lambda function the handler's `logMetrics` middleware flushes `metrics` at the
 * end of each invocation (functions/shared/observed.ts); elsewhere the caller flushes.
 */
export function powertoolsMetrics(
  metrics: Metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
): EngineMetrics {
  return {
    count(name, value = 1, dimension) {
      if (dimension) {
        const single = metrics.singleMetric();
        single.addDimension(dimension.name, dimension.value);
        single.addMetric(name, MetricUnit.Count, value);
        return;
      }
      metrics.addMetric(name, MetricUnit.Count, value);
    },
    seconds(name, value) {
      metrics.addMetric(name, MetricUnit.Seconds, value);
    },
    flush() {
      metrics.publishStoredMetrics();
    },
  };
}
