import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { HandlerExecutionContext } from '@smithy/types';

/** The DynamoDB requests a client sent, by command and table (`UpdateItem` on `t-…-items`). */
export interface RequestLog {
  /** Requests of `command` (`UpdateItem`, `BatchGetItem`, …) on tables whose name ends with `tableSuffix`. */
  count(command: string, tableSuffix?: string): number;
  /** Forgets what was sent so far. */
  reset(): void;
}

/**
 * Logs every request `client` (and the document client over it, which shares its middleware
 * stack) sends from now on: an initialize-step middleware, so a request the SDK retries counts once.
 */
export function logRequests(client: DynamoDBClient): RequestLog {
  let sent: { command: string; tables: string[] }[] = [];
  client.middlewareStack.add(
    (next, context: HandlerExecutionContext) => async (args) => {
      const input = args.input as { TableName?: string; RequestItems?: Record<string, unknown> };
      const tables = input.TableName ? [input.TableName] : Object.keys(input.RequestItems ?? {});
      sent.push({ command: (context.commandName ?? '').replace(/Command$/, ''), tables });
      return next(args);
    },
    { step: 'initialize', name: `testRequestLog-${Math.random()}` },
  );
  return {
    count: (command, tableSuffix = '') =>
      sent.filter((r) => r.command === command && r.tables.some((t) => t.endsWith(tableSuffix))).length,
    reset: () => {
      sent = [];
    },
  };
}
