import { z } from 'zod';
import { CLI_COMMANDS } from '../config/cli-commands.js';
import { InvalidConnectorConfigError, UnknownConnectorError } from '../connectors/registry.js';
import { SourceScheduleError } from '../queue/source-schedules.js';
import {
  DeadLetterConflictError,
  DeadLetterNotFoundError,
  ItemNotFoundError,
  LockNotHeldError,
  RunCancelledError,
  RunFinishedError,
  RunNotFoundError,
  RunStateError,
  SourceBusyError,
  SourceNotFoundError,
} from '../store/errors.js';
import { InvalidCursorError } from '../store/paging.js';
import {
  DeadLetterResolvedError,
  type FieldError,
  MalformedJsonError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RawSecretError,
  RequestValidationError,
  RouteNotFoundError,
  SourceCheckFailedError,
  SourceChecksThrottledError,
  SourcePolicyError,
  SourceTestsBusyError,
  UnsupportedMediaTypeError,
} from './errors.js';

/**
 * RFC 9457 problem details, and the one place that decides which error becomes which status.
 * Messages are exposed only for statuses below 500: they describe the caller's mistake. Anything
 * unexpected answers a generic 500 that quotes the request id the log line carries.
 */

/** Problem `type` URIs: tag URIs (RFC 4151), stable identifiers that are not meant to be fetched. */
export const PROBLEM_TYPES = {
  validation: 'tag:harvester,2025:problems/validation',
  malformedJson: 'tag:harvester,2025:problems/malformed-json',
  unknownConnector: 'tag:harvester,2025:problems/unknown-connector',
  invalidConnectorConfig: 'tag:harvester,2025:problems/invalid-connector-config',
  invalidSchedule: 'tag:harvester,2025:problems/invalid-schedule',
  rawSecret: 'tag:harvester,2025:problems/raw-secret',
  sourcePolicy: 'tag:harvester,2025:problems/source-policy',
  notFound: 'tag:harvester,2025:problems/not-found',
  sourceBusy: 'tag:harvester,2025:problems/source-busy',
  runEnded: 'tag:harvester,2025:problems/run-ended',
  conflict: 'tag:harvester,2025:problems/conflict',
  deadLetterDiscarded: 'tag:harvester,2025:problems/dead-letter-discarded',
  deadLetterResolved: 'tag:harvester,2025:problems/dead-letter-resolved',
  sourceTestsBusy: 'tag:harvester,2025:problems/source-tests-busy',
  blank: 'about:blank',
} as const;

/** The problem+json body of every error response. */
export const ProblemSchema = z
  .object({
    type: z.string().meta({ description: 'Problem type URI; `about:blank` when the status says it all' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().meta({ description: 'The request path' }),
    requestId: z.string().meta({ description: 'Correlation id; quote it when reporting a 5xx' }),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }).meta({ id: 'FieldError' }))
      .optional()
      .meta({ description: 'Fields that failed validation, by dot path' }),
    activeRunId: z.string().optional().meta({ description: '409 source-busy: the run holding the source' }),
    runId: z
      .string()
      .optional()
      .meta({ description: '410 dead-letter-resolved: the run that stored the entity since' }),
    sourceId: z
      .string()
      .optional()
      .meta({ description: '404 source-not-found: the source id asked for (the CLI suggests the closest)' }),
    knownConnectors: z.array(z.string()).optional(),
    allowed: z.array(z.string()).optional().meta({ description: '405: the methods the path allows' }),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' });

/** A problem details body. */
export type Problem = z.infer<typeof ProblemSchema>;

/** A problem before the request-specific members are added. */
export type ProblemCore = Omit<Problem, 'instance' | 'requestId'>;

/** The status and problem for an error, plus extra headers (`Allow` for 405). */
export interface MappedProblem {
  readonly problem: ProblemCore;
  readonly headers?: Record<string, string>;
}

function problem(
  type: string,
  title: string,
  status: number,
  detail: string,
  extra: Partial<ProblemCore> = {},
): MappedProblem {
  return { problem: { type, title, status, detail, ...extra } };
}

function plural(n: number, noun: string): string {
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}

function prefixed(prefix: string, errors: readonly FieldError[]): FieldError[] {
  return errors.map((e) => ({ path: e.path ? `${prefix}.${e.path}` : prefix, message: e.message }));
}

/** Maps any error to its problem. Unknown errors become a generic 500 (the caller logs the real one). */
export function problemFor(error: unknown): MappedProblem {
  const T = PROBLEM_TYPES;
  if (error instanceof RequestValidationError)
    return problem(T.validation, 'Invalid request', 400, error.message, { errors: [...error.errors] });
  if (error instanceof MalformedJsonError)
    return problem(T.malformedJson, 'Malformed JSON', 400, error.message);
  if (error instanceof InvalidCursorError)
    return problem(T.validation, 'Invalid request', 400, error.message, {
      errors: [{ path: 'cursor', message: 'is not a valid cursor' }],
    });
  if (error instanceof UnknownConnectorError)
    return problem(T.unknownConnector, 'Unknown connector', 400, error.message, {
      errors: [{ path: 'connector', message: `must be one of ${error.known.join(', ')}` }],
      knownConnectors: [...error.known],
    });
  if (error instanceof InvalidConnectorConfigError)
    return problem(
      T.invalidConnectorConfig,
      'Invalid connector config',
      400,
      `the ${error.connector} config has ${plural(error.issues.length, 'invalid field')}; see errors`,
      {
        errors: prefixed('config', error.issues),
      },
    );
  if (error instanceof RawSecretError)
    return problem(T.rawSecret, 'Raw secret in config', 400, error.message, {
      errors: prefixed('config', error.errors),
    });
  if (error instanceof SourcePolicyError)
    return problem(T.sourcePolicy, 'Source not allowed', 400, error.message, {
      errors: prefixed('config', error.errors),
    });
  if (error instanceof SourceScheduleError)
    return problem(
      T.invalidSchedule,
      'Invalid schedule',
      400,
      `EventBridge Scheduler refused the schedule: ${error.message}`,
      {
        errors: [{ path: `schedules.${error.index}.expression`, message: error.message }],
      },
    );
  if (error instanceof SourceNotFoundError)
    return problem(
      T.notFound,
      'Source not found',
      404,
      error.message,
      typeof error.context.sourceId === 'string' ? { sourceId: error.context.sourceId } : {},
    );
  if (error instanceof RunNotFoundError) return problem(T.notFound, 'Run not found', 404, error.message);
  if (error instanceof ItemNotFoundError) return problem(T.notFound, 'Item not found', 404, error.message);
  if (error instanceof DeadLetterNotFoundError)
    return problem(T.notFound, 'Dead letter not found', 404, error.message);
  if (error instanceof DeadLetterConflictError)
    return problem(T.deadLetterDiscarded, 'Dead letter already discarded', 409, error.message);
  if (error instanceof DeadLetterResolvedError)
    return problem(T.deadLetterResolved, 'Dead letter already resolved', 410, error.message, {
      runId: error.runId,
    });
  if (error instanceof RouteNotFoundError) return problem(T.blank, 'Not Found', 404, error.message);
  if (error instanceof MethodNotAllowedError)
    return {
      ...problem(T.blank, 'Method Not Allowed', 405, error.message, { allowed: [...error.allowed] }),
      headers: { allow: error.allowed.join(', ') },
    };
  if (error instanceof SourceBusyError)
    return problem(
      T.sourceBusy,
      'Source busy',
      409,
      `${error.message}; wait for it (${CLI_COMMANDS.runsWatch(error.activeRunId)}) or cancel it (${CLI_COMMANDS.runsCancel(error.activeRunId)})`,
      {
        activeRunId: error.activeRunId,
      },
    );
  if (error instanceof RunFinishedError || error instanceof RunCancelledError)
    return problem(T.runEnded, 'Run already ended', 409, error.message);
  if (error instanceof LockNotHeldError || error instanceof RunStateError)
    return problem(T.conflict, 'Conflict', 409, `${error.message}; retry the request`);
  if (error instanceof SourceTestsBusyError || error instanceof SourceChecksThrottledError)
    return {
      ...problem(T.sourceTestsBusy, 'Too Many Requests', 429, error.message),
      headers: { 'retry-after': String(error.retryAfterSeconds) },
    };
  if (error instanceof SourceCheckFailedError) return problem(T.blank, 'Bad Gateway', 502, error.message);
  if (error instanceof PayloadTooLargeError) return problem(T.blank, 'Content Too Large', 413, error.message);
  if (error instanceof UnsupportedMediaTypeError)
    return problem(T.blank, 'Unsupported Media Type', 415, error.message);
  return problem(T.blank, 'Internal Server Error', 500, 'An unexpected error occurred.');
}
