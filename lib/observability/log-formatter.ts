import { LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { WORK_KEYS } from './work-keys.js';

/**
 * Attribute names whose value is a credential. Their values print as `[redacted]` wherever they
 * sit in a line (nested too), so a header map or a config logged by mistake leaks nothing.
 * A reference to a secret (`tokenRef: "ssm:/…"`) is not a secret and prints as is.
 */
const SECRET_NAMES = new Set([
  'authorization',
  'token',
  'accesstoken',
  'refreshtoken',
  'secret',
  'clientsecret',
  'password',
  'apikey',
  'x-api-key',
  'cookie',
  'set-cookie',
  'privatetoken',
  'private-token',
]);

const REDACTED = '[redacted]';
/** Deep enough for a header map inside an error inside a record; deeper values print as is. */
const MAX_DEPTH = 5;

/** Whether an attribute named `key` holds a credential. */
export function isSecretName(key: string): boolean {
  return SECRET_NAMES.has(key.toLowerCase().replaceAll('_', ''));
}

function redacted(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || value instanceof Error)
    return value;
  if (Array.isArray(value)) return value.map((item) => redacted(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      isSecretName(key) ? REDACTED : redacted(inner, depth + 1),
    ]),
  );
}

/**
 * Harvester's log line: one JSON object with `level`, `message`, `timestamp` and `service` first,
 * then the work keys (run, source, epoch, page, partition) whenever the line has them, then the
 * Lambda context (on AWS) and every other attribute, with credential-named values redacted.
 *
 * A fixed order keeps the lines greppable and readable in CloudWatch, where a line is often cut
 * at its first few hundred characters; the run and page must be inside that cut.
 */
export class HarvesterLogFormatter extends LogFormatter {
  /** Builds one line from Powertools' attributes and the logger's own (persistent + per call). */
  public override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const work: LogAttributes = {};
    const rest: LogAttributes = {};
    for (const [key, value] of Object.entries(additional)) {
      if ((WORK_KEYS as readonly string[]).includes(key)) work[key] = value as LogAttributes[string];
      else rest[key] = value as LogAttributes[string];
    }
    const lambda = attributes.lambdaContext;
    const line: LogAttributes = {
      level: attributes.logLevel,
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      ...Object.fromEntries(WORK_KEYS.filter((key) => key in work).map((key) => [key, work[key]])),
      ...(lambda
        ? {
            function_name: lambda.functionName,
            function_request_id: lambda.awsRequestId,
            cold_start: lambda.coldStart,
          }
        : {}),
      ...(attributes.xRayTraceId ? { xray_trace_id: attributes.xRayTraceId } : {}),
      ...(attributes.sampleRateValue ? { sampling_rate: attributes.sampleRateValue } : {}),
      ...(redacted(rest, 0) as LogAttributes),
    };
    return new LogItem({ attributes: line });
  }
}
