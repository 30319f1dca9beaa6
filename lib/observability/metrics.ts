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
  /** Succeeded full and reconciliation runs whose completeness check found the store short of the source. */
  runsShort: 'RunsShort',
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
  /** Run events the store could not write (the run goes on; its story misses them), by event type. */
  runEventsLost: 'RunEventsLost',
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** How a metric is counted, and the dimension keys it carries besides `service`. */
export interface MetricSpec {
  readonly unit: 'Count' | 'Seconds';
  /** Keys of the one extra dimension set it is emitted with, in order; `[]`: `service` alone. */
  readonly dimensions: readonly string[];
}

/**
 * Every metric the code emits, with its unit and dimension keys: the one declaration the emit
 * calls are typed by ({@link EngineMetrics}) and the dashboard and alarms read
 * (infra/constructs/observability.ts). CloudWatch matches a metric by its exact dimension set, so a
 * graph of `DeadLetters` by `service` alone shows nothing when the code emits `{service, Kind}`:
 * a synth test holds every dashboard widget to this catalog.
 */
export const METRIC_CATALOG = {
  [METRIC.pagesCommitted]: { unit: 'Count', dimensions: [] },
  [METRIC.itemsLoaded]: { unit: 'Count', dimensions: [] },
  [METRIC.retries]: { unit: 'Count', dimensions: ['ErrorClass'] },
  [METRIC.deferrals]: { unit: 'Count', dimensions: [] },
  [METRIC.deadLetters]: { unit: 'Count', dimensions: ['Kind'] },
  [METRIC.droppedMessages]: { unit: 'Count', dimensions: ['Reason'] },
  [METRIC.runsSucceeded]: { unit: 'Count', dimensions: [] },
  [METRIC.runsFailed]: { unit: 'Count', dimensions: [] },
  [METRIC.runsShort]: { unit: 'Count', dimensions: [] },
  [METRIC.runsResumed]: { unit: 'Count', dimensions: ['Verdict'] },
  [METRIC.runDurationSeconds]: { unit: 'Seconds', dimensions: [] },
  [METRIC.runsWaiting]: { unit: 'Count', dimensions: [] },
  [METRIC.oldestWaitSeconds]: { unit: 'Seconds', dimensions: [] },
  [METRIC.pagesResent]: { unit: 'Count', dimensions: ['Reason'] },
  [METRIC.budgetWaits]: { unit: 'Count', dimensions: [] },
  [METRIC.budgetWaitSeconds]: { unit: 'Seconds', dimensions: [] },
  [METRIC.budgetRejected]: { unit: 'Count', dimensions: [] },
  [METRIC.tombstoned]: { unit: 'Count', dimensions: [] },
  [METRIC.requestsRefused]: { unit: 'Count', dimensions: [] },
  [METRIC.runEventsLost]: { unit: 'Count', dimensions: ['EventType'] },
} as const satisfies Record<MetricName, MetricSpec>;

type Catalog = typeof METRIC_CATALOG;

/** The metrics counted in `Count`. */
export type CountMetricName = {
  [N in MetricName]: Catalog[N]['unit'] extends 'Count' ? N : never;
}[MetricName];
/** The metrics measured in `Seconds`. */
export type SecondsMetricName = Exclude<MetricName, CountMetricName>;

/** The arguments after the name: a metric with a dimension key needs a value for it. */
export type CountArgs<N extends CountMetricName> = Catalog[N]['dimensions'] extends readonly []
  ? [value?: number]
  : [value: number, dimension: { name: Catalog[N]['dimensions'][number]; value: string }];

export const METRICS_NAMESPACE = 'Harvester';

/** The Powertools service name of every log line, metric and trace. */
export const SERVICE_NAME = 'harvester';

/** The dimension set a metric is emitted with: Powertools adds `service` to every one. */
export function emittedDimensions(name: MetricName): string[] {
  return ['service', ...METRIC_CATALOG[name].dimensions];
}

/** The engine's view of metrics, typed by {@link METRIC_CATALOG}; published once per invocation. */
export interface EngineMetrics {
  count<N extends CountMetricName>(name: N, ...args: CountArgs<N>): void;
  seconds(name: SecondsMetricName, value: number): void;
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
    count(name, ...[value = 1, dimension]) {
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
