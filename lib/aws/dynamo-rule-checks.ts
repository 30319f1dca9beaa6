import { isWellFormed, wellFormed } from '../json/unicode.js';
import {
  itemBytes,
  keyValueBytes,
  MAX_ITEM_BYTES,
  MAX_PARTITION_KEY_BYTES,
  MAX_SORT_KEY_BYTES,
  nestedTooDeep,
  type WireItem,
} from './dynamo-sizes.js';

/**
 * The checks behind the strict DynamoDB layer (`dynamo-rules.ts`): given one wire request, the
 * first rule DynamoDB would refuse it for, with DynamoDB's exception name and message. The
 * expression rules (unused or undefined names and values, reserved words, syntax) come from
 * dynalite's request validations, whose messages are DynamoDB's; the limits dynalite leaves out
 * (expression length, transaction shape, item size in UTF-8 bytes, nesting depth, key length)
 * are measured here.
 */

/** A refusal DynamoDB would answer with, before doing any work. */
export interface RuleViolation {
  readonly name: string;
  readonly message: string;
}

/** A table's key attribute names, from DescribeTable. */
export interface KeySchema {
  readonly partition: string;
  readonly sort?: string | undefined;
}

/** The request validations of one dynalite action (`dynalite/validations/<action>.js`). */
export interface DynaliteAction {
  readonly types: object;
  readonly custom?: (data: unknown, store: unknown) => string | undefined;
}

/** The parts of dynalite the checks use. */
export interface DynaliteValidations {
  checkTypes(data: unknown, types: object): unknown;
  checkValidations(data: unknown, types: object, custom: DynaliteAction['custom'], store: unknown): void;
  action(name: DynaliteActionName): DynaliteAction;
}

export const DYNALITE_ACTIONS = [
  'putItem',
  'updateItem',
  'deleteItem',
  'getItem',
  'query',
  'scan',
  'batchGetItem',
  'batchWriteItem',
] as const;
export type DynaliteActionName = (typeof DYNALITE_ACTIONS)[number];

/** Expression parameters DynamoDB caps at 4 KB each, measured on the string as sent. */
const EXPRESSIONS = [
  'UpdateExpression',
  'ConditionExpression',
  'KeyConditionExpression',
  'FilterExpression',
  'ProjectionExpression',
] as const;
const MAX_EXPRESSION_BYTES = 4096;
const MAX_TRANSACTION_ACTIONS = 100;
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
const MAX_BATCH_WRITES = 25;

/** dynalite's item-size check reads its store's option; the limit is DynamoDB's. */
const DYNALITE_STORE = { options: { maxItemSize: MAX_ITEM_BYTES } };

const validation = (message: string): RuleViolation => ({ name: 'ValidationException', message });

type Body = Record<string, unknown>;
type KeysOf = (table: string) => KeySchema | undefined;

/** One action's request as dynalite's single-item validations expect it. */
interface Action {
  readonly kind: DynaliteActionName;
  readonly request: Body;
  /** The item a Put writes. */
  readonly item?: WireItem | undefined;
  /** The key an Update, Delete, ConditionCheck or Get names. */
  readonly key?: WireItem | undefined;
}

/** The DynamoDB operations the layer checks; every other one passes untouched. */
export const CHECKED_OPERATIONS = [
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'GetItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'TransactGetItems',
] as const;
export type CheckedOperation = (typeof CHECKED_OPERATIONS)[number];

/** The tables a request names, so their key schemas can be looked up before {@link requestViolation}. */
export function tablesOf(operation: CheckedOperation, body: Body): string[] {
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem')
    return Object.keys(records(body.RequestItems));
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    return list(body.TransactItems).flatMap((entry) =>
      Object.values(records(entry)).map((action) => String(records(action).TableName)),
    );
  }
  return typeof body.TableName === 'string' ? [body.TableName] : [];
}

/**
 * The first rule DynamoDB refuses `body` for, or null when it would accept it.
 *
 * @example
 * requestViolation('UpdateItem', { TableName: 't', Key: { id: { S: 'a' } }, UpdateExpression: 'SET a = :a',
 *   ExpressionAttributeValues: { ':a': { N: '1' }, ':one': { N: '1' } } }, () => undefined, dynalite);
 * // { name: 'ValidationException',
 * //   message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}' }
 */
export function requestViolation(
  operation: CheckedOperation,
  body: Body,
  keysOf: KeysOf,
  dynalite: DynaliteValidations,
): RuleViolation | null {
  const unicode = unicodeViolation(body);
  if (unicode) return unicode;
  switch (operation) {
    case 'TransactWriteItems':
      return transactWriteViolation(body, keysOf, dynalite);
    case 'TransactGetItems': {
      const entries = list(body.TransactItems);
      if (entries.length > MAX_TRANSACTION_ACTIONS) return tooManyActions();
      return firstOf(
        entries.map((entry) => () => actionViolation(getAction(records(entry).Get), keysOf, dynalite)),
      );
    }
    case 'BatchWriteItem':
      return batchWriteViolation(body, keysOf, dynalite);
    case 'BatchGetItem':
      return (
        expressionSizeViolation(body) ??
        dynaliteViolation('batchGetItem', body, dynalite) ??
        firstOf(
          Object.entries(records(body.RequestItems)).flatMap(([table, request]) =>
            list(records(request).Keys).map((key) => () => keyViolation(table, key as WireItem, keysOf)),
          ),
        )
      );
    default:
      return actionViolation(singleAction(operation, body), keysOf, dynalite);
  }
}

function singleAction(
  operation: Exclude<CheckedOperation, `Transact${string}` | `Batch${string}`>,
  body: Body,
): Action {
  const kind = (operation.charAt(0).toLowerCase() + operation.slice(1)) as DynaliteActionName;
  if (operation === 'PutItem') return { kind, request: body, item: body.Item as WireItem };
  if (operation === 'Query' || operation === 'Scan') return { kind, request: body };
  return { kind, request: body, key: body.Key as WireItem };
}

function getAction(get: unknown): Action {
  return { kind: 'getItem', request: records(get), key: records(get).Key as WireItem };
}

/** One request or transaction action, on its own: the rules DynamoDB applies to each. */
function actionViolation(
  action: Action,
  keysOf: KeysOf,
  dynalite: DynaliteValidations,
): RuleViolation | null {
  const table = String(action.request.TableName);
  const values = action.request.ExpressionAttributeValues as WireItem | undefined;
  return (
    expressionSizeViolation(action.request) ??
    dynaliteViolation(action.kind, action.request, dynalite) ??
    nestingViolation(action.item) ??
    nestingViolation(values) ??
    keyViolation(table, action.item ?? action.key, keysOf) ??
    (action.item !== undefined && itemBytes(action.item) > MAX_ITEM_BYTES
      ? validation('Item size has exceeded the maximum allowed size')
      : null)
  );
}

function transactWriteViolation(
  body: Body,
  keysOf: KeysOf,
  dynalite: DynaliteValidations,
): RuleViolation | null {
  const entries = list(body.TransactItems);
  if (entries.length > MAX_TRANSACTION_ACTIONS) return tooManyActions();
  const actions = entries.map((entry): Action => {
    const { Put, Update, Delete, ConditionCheck } = records(entry) as Record<string, Body | undefined>;
    if (Put) return { kind: 'putItem', request: Put, item: Put.Item as WireItem };
    if (Update) return { kind: 'updateItem', request: Update, key: Update.Key as WireItem };
    // A ConditionCheck has a Delete's shape: a key, a condition, its names and values.
    const other = Delete ?? ConditionCheck ?? {};
    return { kind: 'deleteItem', request: other, key: other.Key as WireItem };
  });
  const each = firstOf(actions.map((action) => () => actionViolation(action, keysOf, dynalite)));
  if (each) return each;
  const seen = new Set<string>();
  for (const action of actions) {
    const identity = itemIdentity(String(action.request.TableName), action.item ?? action.key, keysOf);
    if (identity === undefined) continue;
    if (seen.has(identity))
      return validation('Transaction request cannot include multiple operations on one item');
    seen.add(identity);
  }
  const payload = actions.reduce(
    (total, action) =>
      total +
      itemBytes(action.item ?? action.key ?? {}) +
      itemBytes((action.request.ExpressionAttributeValues as WireItem | undefined) ?? {}),
    0,
  );
  if (payload > MAX_TRANSACTION_BYTES) {
    return validation(`Transaction payload size cannot exceed 4MB. Payload Size: ${payload}`);
  }
  return null;
}

function batchWriteViolation(
  body: Body,
  keysOf: KeysOf,
  dynalite: DynaliteValidations,
): RuleViolation | null {
  const tables = Object.entries(records(body.RequestItems));
  const count = tables.reduce((total, [, requests]) => total + list(requests).length, 0);
  const shape = dynaliteViolation('batchWriteItem', body, dynalite);
  if (shape) return shape;
  if (count > MAX_BATCH_WRITES) return validation('Too many items requested for the BatchWriteItem call');
  return firstOf(
    tables.flatMap(([table, requests]) =>
      list(requests).map((request) => () => {
        const { PutRequest, DeleteRequest } = records(request) as Record<string, Body | undefined>;
        const item = PutRequest?.Item as WireItem | undefined;
        return (
          nestingViolation(item) ??
          keyViolation(table, item ?? (DeleteRequest?.Key as WireItem | undefined), keysOf) ??
          (item !== undefined && itemBytes(item) > MAX_ITEM_BYTES
            ? validation('Item size has exceeded the maximum allowed size')
            : null)
        );
      }),
    ),
  );
}

/**
 * DynamoDB keeps strings, attribute names and expressions as UTF-8, which a lone UTF-16
 * surrogate has no form in; JSON still carries one (`"\ud800"`). DynamoDB's documentation says
 * no more than "UTF-8", so the layer holds every string of the request to it: what DynamoDB would
 * refuse, or store as something other than what was sent, is never sent. moto applies such a
 * write and then fails to encode its own answer, so the SDK sends it again and the copy meets its
 * own condition as already written.
 */
function unicodeViolation(value: unknown, path = ''): RuleViolation | null {
  if (typeof value === 'string') return isWellFormed(value) ? null : notUnicode(path);
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    // A name is shown with its lone surrogates replaced; a name that changes so held one.
    const name = wellFormed(key);
    const at = Array.isArray(value) ? `${path}[${key}]` : path === '' ? name : `${path}.${name}`;
    if (name !== key) return notUnicode(at);
    const found = unicodeViolation(child, at);
    if (found) return found;
  }
  return null;
}

function notUnicode(path: string): RuleViolation {
  return validation(
    `One or more parameter values were invalid: ${path} holds a lone UTF-16 surrogate, which has no UTF-8 form`,
  );
}

function expressionSizeViolation(request: Body): RuleViolation | null {
  for (const name of EXPRESSIONS) {
    const expression = request[name];
    if (typeof expression !== 'string') continue;
    const bytes = Buffer.byteLength(expression);
    if (bytes > MAX_EXPRESSION_BYTES) {
      return validation(
        `Invalid ${name}: Expression size has exceeded the maximum allowed size; expression size: ${bytes}`,
      );
    }
  }
  return null;
}

function nestingViolation(item: WireItem | undefined): RuleViolation | null {
  if (item === undefined || !nestedTooDeep(item)) return null;
  return validation(
    'Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit',
  );
}

function keyViolation(table: string, item: WireItem | undefined, keysOf: KeysOf): RuleViolation | null {
  const schema = keysOf(table);
  if (schema === undefined || item === undefined) return null;
  if (keyValueBytes(item[schema.partition]) > MAX_PARTITION_KEY_BYTES) {
    // "of2048" is DynamoDB's own spelling.
    return validation(
      'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes',
    );
  }
  if (schema.sort !== undefined && keyValueBytes(item[schema.sort]) > MAX_SORT_KEY_BYTES) {
    return validation(
      'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes',
    );
  }
  return null;
}

/** The table and key of the item an action touches, or undefined when the table's schema is unknown. */
function itemIdentity(table: string, item: WireItem | undefined, keysOf: KeysOf): string | undefined {
  const schema = keysOf(table);
  if (schema === undefined || item === undefined) return undefined;
  const key = [item[schema.partition], schema.sort === undefined ? null : item[schema.sort]];
  return JSON.stringify([table, key]);
}

/**
 * A copy of the request for dynalite, which rewrites what it is given and rebuilds maps by
 * assignment: a `__proto__` key (a legal attribute name DynamoDB keeps) would set the rebuilt
 * map's prototype instead, leaving an empty AttributeValue DynamoDB never sees. The key is
 * renamed in the copy only; every other check reads the request as sent.
 */
function renamedProtoKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renamedProtoKeys);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value))
    copy[key === '__proto__' ? PROTO_STAND_IN : key] = renamedProtoKeys(child);
  return copy;
}

/** What a `__proto__` key is called in dynalite's copy: a name no JSON key of ours collides with. */
const PROTO_STAND_IN = '\u0000__proto__';

/** Runs one dynalite action's validations on a copy (they rewrite what they are given). */
function dynaliteViolation(
  kind: DynaliteActionName,
  request: Body,
  dynalite: DynaliteValidations,
): RuleViolation | null {
  const action = dynalite.action(kind);
  try {
    const data = dynalite.checkTypes(renamedProtoKeys(request), action.types);
    dynalite.checkValidations(data, action.types, action.custom, DYNALITE_STORE);
    return null;
  } catch (error) {
    const body = (error as { body?: { __type?: string; message?: string; Message?: string } }).body;
    // Anything without dynalite's refusal shape is a fault of the check, not of the request.
    if (body === undefined) return null;
    const name = body.__type?.split('#')[1] ?? 'ValidationException';
    return { name, message: body.message ?? body.Message ?? String(error) };
  }
}

function tooManyActions(): RuleViolation {
  // DynamoDB also echoes the actions into the message; they are left out here.
  return validation(
    "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100",
  );
}

function firstOf(checks: readonly (() => RuleViolation | null)[]): RuleViolation | null {
  for (const check of checks) {
    const violation = check();
    if (violation) return violation;
  }
  return null;
}

function records(value: unknown): Body {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
