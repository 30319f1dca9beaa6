import { readFileSync } from 'node:fs';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import {
  emittedDimensions,
  METRIC,
  METRIC_CATALOG,
  METRICS_NAMESPACE,
  type MetricName,
  powertoolsMetrics,
} from '../../lib/observability/metrics.js';

/**
 * The dashboard draws only what the code emits: every Harvester metric a widget or alarm names
 * is in the catalog (lib/observability/metrics.ts) with the exact dimension set the code emits it
 * with, since CloudWatch shows nothing for any other set. And the catalog is what Powertools
 * really writes.
 */

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
const app = new App({
  context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], 'harvester:changeFeed': 'true' },
});
const template = Template.fromStack(addHarvester(app));

/** The dashboard body with every token (region, ARNs, names) as the text `TOKEN`. */
function dashboardBody(): { widgets: { type: string; properties: Record<string, unknown> }[] } {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  const body = dashboard!.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof body === 'string'
      ? body
      : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return JSON.parse(text);
}

/** A metric a widget draws: its namespace, name and dimension keys. */
interface Drawn {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: string[];
}

/** What one widget `metrics` entry draws: a metric array, or a SEARCH expression's schema. */
function drawnBy(entry: unknown[]): Drawn[] {
  const [first] = entry;
  if (first && typeof first === 'object' && 'expression' in first) {
    const expression = String((first as { expression: string }).expression);
    const searches = [...expression.matchAll(/SEARCH\('([^']*)'/g)].map((m) => m[1]!);
    expect(searches.length, `an expression other than SEARCH: ${expression}`).toBeGreaterThan(0);
    return searches.map((search) => {
      // A free-text search matches any dimension set, including ones the code never emits.
      const schema = /^\{([^}]*)\}\s+MetricName="([^"]+)"$/.exec(search.trim());
      expect(schema, `a SEARCH without a {namespace,dimensions} schema: ${search}`).not.toBeNull();
      const [namespace, ...dimensions] = schema![1]!.split(',').map((s) => s.trim());
      return { namespace: namespace!, name: schema![2]!, dimensions };
    });
  }
  const parts = entry.filter((p) => typeof p === 'string') as string[];
  const [namespace, name, ...pairs] = parts;
  return [{ namespace: namespace!, name: name!, dimensions: pairs.filter((_, i) => i % 2 === 0) }];
}

function drawnMetrics(): { widget: string; drawn: Drawn }[] {
  return dashboardBody().widgets.flatMap((widget) =>
    ((widget.properties.metrics as unknown[][] | undefined) ?? []).flatMap((entry) =>
      drawnBy(entry).map((drawn) => ({ widget: String(widget.properties.title), drawn })),
    ),
  );
}

const isCatalogued = (name: string): name is MetricName => Object.hasOwn(METRIC_CATALOG, name);

describe('the dashboard', () => {
  it('names every Harvester metric with the dimension set the code emits it with', () => {
    const harvester = drawnMetrics().filter((m) => m.drawn.namespace === METRICS_NAMESPACE);

    expect(harvester.length).toBeGreaterThan(0);
    for (const { widget, drawn } of harvester) {
      expect(isCatalogued(drawn.name), `${widget}: ${drawn.name} is never emitted`).toBe(true);
      expect(drawn.dimensions, `${widget}: ${drawn.name}`).toEqual(
        emittedDimensions(drawn.name as MetricName),
      );
    }
  });

  it('graphs every metric the code emits', () => {
    const drawn = new Set(
      drawnMetrics()
        .filter((m) => m.drawn.namespace === METRICS_NAMESPACE)
        .map((m) => m.drawn.name),
    );

    expect([...drawn].sort()).toEqual(Object.keys(METRIC_CATALOG).sort());
  });

  it('draws the per-dimension metrics as one line per value (DeadLetters by Kind, not by service alone)', () => {
    const byName = (name: string) =>
      drawnMetrics()
        .filter((m) => m.drawn.name === name)
        .map((m) => m.drawn.dimensions);

    expect(byName(METRIC.deadLetters)).toEqual([['service', 'Kind']]);
    expect(byName(METRIC.droppedMessages)).toEqual([['service', 'Reason']]);
    expect(byName(METRIC.runsResumed)).toEqual([['service', 'Verdict']]);
  });

  it("graphs the admin API's 4xx, 5xx and latency by ApiId", () => {
    const api = drawnMetrics()
      .filter((m) => m.drawn.namespace === 'AWS/ApiGateway')
      .map((m) => [m.drawn.name, m.drawn.dimensions]);

    expect(api).toEqual(
      expect.arrayContaining([
        ['4xx', ['ApiId']],
        ['5xx', ['ApiId']],
        ['Latency', ['ApiId']],
      ]),
    );
  });

  it('has a per-source view: a Logs Insights query over the functions grouped by sourceId', () => {
    const queries = dashboardBody()
      .widgets.filter((w) => w.type === 'log')
      .map((w) => String(w.properties.query));

    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) {
      expect(query).toMatch(/by sourceId/);
      // Every function that logs engine work is searched (worker, drain, reaper, start-run, API, check).
      expect(query.match(/SOURCE '/g)).toHaveLength(6);
    }
  });

  it('alarms only on Harvester metrics the code emits, with their dimension set', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
      (a) => a.Properties.Namespace === METRICS_NAMESPACE,
    );

    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      const name = alarm.Properties.MetricName as string;
      expect(isCatalogued(name)).toBe(true);
      expect(alarm.Properties.Dimensions.map((d: { Name: string }) => d.Name)).toEqual(
        emittedDimensions(name as MetricName),
      );
    }
  });
});

describe('the metrics catalog', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is what Powertools writes: each metric in exactly its catalogued dimension set', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const metrics = powertoolsMetrics(
      new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'harvester' }),
    );

    for (const [name, spec] of Object.entries(METRIC_CATALOG) as [
      MetricName,
      (typeof METRIC_CATALOG)[MetricName],
    ][]) {
      const emit = metrics as unknown as {
        count(name: string, value: number, dimension?: { name: string; value: string }): void;
        seconds(name: string, value: number): void;
      };
      if (spec.unit === 'Seconds') emit.seconds(name, 1);
      else emit.count(name, 1, spec.dimensions[0] ? { name: spec.dimensions[0], value: 'x' } : undefined);
    }
    metrics.flush();

    const written = new Map<string, string[][]>();
    for (const line of lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('CloudWatchMetrics'))) {
      const emf = JSON.parse(line) as {
        _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      };
      for (const directive of emf._aws.CloudWatchMetrics)
        for (const metric of directive.Metrics) written.set(metric.Name, directive.Dimensions);
    }
    expect([...written.keys()].sort()).toEqual(Object.keys(METRIC_CATALOG).sort());
    for (const [name, dimensions] of written)
      expect(dimensions, name).toEqual([emittedDimensions(name as MetricName)]);
  });

  it('types the emit calls: a metric with a dimension key cannot be counted without it', () => {
    const metrics = powertoolsMetrics(
      new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'harvester' }),
    );
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);

    // @ts-expect-error DeadLetters is emitted per Kind: tsc refuses a count without one.
    const untyped = () => metrics.count(METRIC.deadLetters);
    // @ts-expect-error and with a dimension key the catalog does not declare for it.
    const misnamed = () => metrics.count(METRIC.deadLetters, 1, { name: 'Reason', value: 'x' });

    expect([untyped, misnamed]).toHaveLength(2);
  });
});
