import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  DescribeTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  DynamoDBServiceException,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-dynamodb';
import { HttpRequest } from '@smithy/protocol-http';
import type { BuildMiddleware, Pluggable } from '@smithy/types';
import { z } from 'zod';
import {
  CHECKED_OPERATIONS,
  type CheckedOperation,
  type DynaliteActionName,
  type DynaliteValidations,
  type KeySchema,
  type RuleViolation,
  requestViolation,
  tablesOf,
} from './dynamo-rule-checks.js';

/**
 * The strict DynamoDB layer: a middleware that refuses, before it is sent, every request real
 * DynamoDB would refuse but an emulator accepts (moto takes unused expression values, reserved
 * words, oversized transactions…). It runs at the `build` step, on the serialized wire request,
 * so the document client and the low-level client are both covered, and once per call (the
 * SDK's retries come later). See docs/dynamodb-rules.md for the rules and why they exist.
 *
 * On real AWS it is off: DynamoDB itself answers there, and the layer would only cost time.
 */

/** What the layer does with a request DynamoDB would refuse. */
export type StrictMode =
  | { readonly kind: 'off' }
  /** Fail the call with DynamoDB's own `ValidationException`, unsent. */
  | { readonly kind: 'throw' }
  /** Append the violation to `file` as one JSON line and send the request anyway. */
  | { readonly kind: 'report'; readonly file: string };

const MODE_VARIABLE = 'HARVESTER_STRICT_DYNAMODB';

const modeSchema = z
  .string()
  .trim()
  .transform((text, context): StrictMode => {
    if (/^(off|0|false)$/i.test(text)) return { kind: 'off' };
    if (/^(on|1|true|throw)$/i.test(text)) return { kind: 'throw' };
    const report = /^report:(.+)$/.exec(text);
    if (report?.[1]) return { kind: 'report', file: report[1] };
    context.addIssue({
      code: 'custom',
      message: `${MODE_VARIABLE} is off, on, or report:<file>; got "${text}"`,
    });
    return z.NEVER;
  });

/**
 * The mode `HARVESTER_STRICT_DYNAMODB` asks for (`off`, `on`, `report:<file>`), or undefined when
 * it is unset and the caller's default applies.
 *
 * @example
 * strictModeFromEnv({ HARVESTER_STRICT_DYNAMODB: 'report:/tmp/violations.jsonl' });
 * // { kind: 'report', file: '/tmp/violations.jsonl' }
 */
export function strictModeFromEnv(env: NodeJS.ProcessEnv = process.env): StrictMode | undefined {
  const value = env[MODE_VARIABLE];
  return value === undefined || value === '' ? undefined : modeSchema.parse(value);
}

/**
 * The layer as a middleware for a DynamoDB client. `config` is the client's own configuration:
 * table key schemas (for the key-length and one-item-per-transaction rules) are read with
 * DescribeTable through a separate client built from it, once per table, since the checked client
 * would check its own DescribeTable call.
 *
 * @example
 * dynamo.middlewareStack.use(strictDynamoDB(config, { kind: 'throw' }));
 */
export function strictDynamoDB(
  config: DynamoDBClientConfig,
  mode: StrictMode,
): Pluggable<ServiceInputTypes, ServiceOutputTypes> {
  const schemas = new Map<string, Promise<KeySchema | undefined>>();
  const schemaOf = (table: string): Promise<KeySchema | undefined> => {
    let schema = schemas.get(table);
    if (!schema) {
      schema = describeKeys(config, table);
      schemas.set(table, schema);
      // A table not there yet may be created later: only a found schema is kept.
      void schema.then((found) => found ?? schemas.delete(table));
    }
    return schema;
  };
  const middleware: BuildMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
    if (mode.kind !== 'off') {
      const checked = await check(args.request, schemaOf);
      if (checked) refuse(checked, mode);
    }
    return next(args);
  };
  return {
    applyToStack(stack) {
      stack.add(middleware, { step: 'build', name: 'harvesterStrictDynamoDB' });
    },
  };
}

/** A broken rule, with the operation and tables of the request that broke it. */
export interface Checked extends RuleViolation {
  readonly operation: CheckedOperation;
  readonly tables: readonly string[];
}

async function check(
  request: unknown,
  schemaOf: (table: string) => Promise<KeySchema | undefined>,
): Promise<Checked | null> {
  if (!HttpRequest.isInstance(request)) return null;
  const target = Object.entries(request.headers).find(([name]) => name.toLowerCase() === 'x-amz-target')?.[1];
  const text = bodyText(request.body);
  return text === undefined ? null : wireViolation(target, text, schemaOf);
}

/**
 * The rule a serialized DynamoDB request breaks, from its `X-Amz-Target` header and JSON body, or
 * null (also for an operation the layer does not check). Shared by the layer and the emulator's
 * door (lib/local/dynamo-door.ts), which judges the bytes that reach the emulator.
 */
export async function wireViolation(
  target: string | undefined,
  text: string,
  schemaOf: (table: string) => Promise<KeySchema | undefined>,
): Promise<Checked | null> {
  const operation = operationOf(target);
  if (operation === undefined) return null;
  const body = JSON.parse(text) as Record<string, unknown>;
  const tables = [...new Set(tablesOf(operation, body))];
  const known = new Map<string, KeySchema | undefined>();
  for (const table of tables) known.set(table, await schemaOf(table));
  const violation = requestViolation(operation, body, (table) => known.get(table), dynalite());
  return violation ? { ...violation, operation, tables } : null;
}

/** The serialized JSON body: a string, or (current SDKs) its UTF-8 bytes. */
function bodyText(body: unknown): string | undefined {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return undefined;
}

function operationOf(target: string | undefined): CheckedOperation | undefined {
  const operation = target?.startsWith('DynamoDB_20120810.') ? target.slice('DynamoDB_20120810.'.length) : '';
  return (CHECKED_OPERATIONS as readonly string[]).includes(operation)
    ? (operation as CheckedOperation)
    : undefined;
}

function refuse(checked: Checked, mode: StrictMode): void {
  if (mode.kind === 'report') {
    const line = {
      at: new Date().toISOString(),
      operation: checked.operation,
      tables: checked.tables,
      name: checked.name,
      message: checked.message,
      // The awaiting callers show in the async stack: enough to find the code that built it.
      callers: callers(),
    };
    appendFileSync(mode.file, `${JSON.stringify(line)}\n`);
    return;
  }
  throw new DynamoDBServiceException({
    name: checked.name,
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: checked.message,
  });
}

function callers(): string[] {
  const stack = new Error().stack?.split('\n').slice(1) ?? [];
  return stack
    .map((line) => line.trim())
    .filter(
      (line) => !line.includes('node_modules') && !line.includes('dynamo-rules') && !line.includes('node:'),
    )
    .slice(0, 6);
}

/** The key attribute names of `table`, or undefined when it cannot be described (let DynamoDB answer). */
export async function describeKeys(
  config: DynamoDBClientConfig,
  table: string,
): Promise<KeySchema | undefined> {
  const raw = new DynamoDBClient(config);
  try {
    const { Table } = await raw.send(new DescribeTableCommand({ TableName: table }));
    const keys = Table?.KeySchema ?? [];
    const partition = keys.find((key) => key.KeyType === 'HASH')?.AttributeName;
    if (partition === undefined) return undefined;
    return { partition, sort: keys.find((key) => key.KeyType === 'RANGE')?.AttributeName };
  } catch {
    return undefined;
  } finally {
    raw.destroy();
  }
}

let loaded: DynaliteValidations | undefined;

/**
 * dynalite's validations, loaded on first use: only a process with the layer on pays for them,
 * and no bundler follows a `createRequire` call into a Lambda bundle.
 */
function dynalite(): DynaliteValidations {
  if (loaded) return loaded;
  const load = createRequire(import.meta.url);
  const index = load('dynalite/validations/index.js') as Pick<
    DynaliteValidations,
    'checkTypes' | 'checkValidations'
  >;
  const actions = new Map<DynaliteActionName, ReturnType<DynaliteValidations['action']>>();
  loaded = {
    checkTypes: index.checkTypes,
    checkValidations: index.checkValidations,
    action(name) {
      let action = actions.get(name);
      if (!action) {
        action = load(`dynalite/validations/${name}.js`) as ReturnType<DynaliteValidations['action']>;
        actions.set(name, action);
      }
      return action;
    },
  };
  return loaded;
}
