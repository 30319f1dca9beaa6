/**
 * The one middleware stack every Harvester Lambda handler runs under (Powertools with middy):
 * the tracer opens the handler's subsegment, the logger carries the invocation's context
 * (request id, function name, cold start) on every line, and the metrics recorded during the
 * invocation are written as one EMF line when it ends, whether it succeeded or threw.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy, { type MiddyfiedHandler } from '@middy/core';
import type { Context } from 'aws-lambda';

/** The Powertools instances of one Lambda process, shared by its handler and the engine it drives. */
export interface LambdaObservability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tracer: Tracer;
}

/**
 * Wraps `handler` in the shared stack. Responses are not put on the trace (an API response or a
 * run report may be large, and items are the sources' data); errors are.
 *
 * @example
 * export const handler = observed(runtime.observability, async (event: SQSEvent, context) => …);
 */
export function observed<TEvent, TResult>(
  observability: LambdaObservability,
  handler: (event: TEvent, context: Context) => Promise<TResult>,
): MiddyfiedHandler<TEvent, TResult> {
  return middy<TEvent, TResult>()
    .use(captureLambdaHandler(observability.tracer, { captureResponse: false }))
    .use(injectLambdaContext(observability.logger, { resetKeys: true }))
    .use(logMetrics(observability.metrics, { captureColdStartMetric: true }))
    .handler(handler);
}

/** Work keys a trace can be searched by (X-Ray annotations), on the handler's subsegment. */
export function annotateWork(tracer: Tracer, keys: { runId?: string; sourceId?: string }): void {
  if (keys.runId) tracer.putAnnotation('runId', keys.runId);
  if (keys.sourceId) tracer.putAnnotation('sourceId', keys.sourceId);
}
