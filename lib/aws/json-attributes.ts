import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NumberValue } from '../json/lossless.js';

/*
 * The document client's translation between JavaScript values and DynamoDB attribute values,
 * made safe for field names that are data. `@aws-sdk/util-dynamodb` decides what a value is by
 * its `constructor.name`, so `{ constructor: 'Ferrari' }` is refused as a class instance and
 * `{ constructor: { name: 'Set' } }` would be written as a set; it builds maps by assignment, so
 * a `__proto__` key becomes the map's prototype and the field vanishes, on the way in and out.
 * Here a value's kind is read from its prototype, and every key is defined as an own property.
 */

/** A value the store cannot translate into a DynamoDB attribute (a function, a class instance …). */
export class AttributeValueError extends Error {
  override readonly name = 'AttributeValueError';
}

/** Options of {@link toAttributeValue}, as the document client's `marshallOptions`. */
export interface ToAttributeOptions {
  /** Leave out `undefined` members of maps and lists instead of refusing them. */
  readonly removeUndefinedValues?: boolean;
}

/** Options of {@link fromAttributeValue}, as the document client's `unmarshallOptions`. */
export interface FromAttributeOptions {
  /** Turns a stored number's text into the value handed back; default `Number`. */
  readonly wrapNumbers?: (text: string) => unknown;
}

/** Sets `key` as an own, enumerable property: `__proto__` too, which assignment would not. */
export function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** True for an object built from JSON or a literal (its prototype is `Object.prototype` or null). */
function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function numberAttribute(value: number): AttributeValue {
  if (!Number.isFinite(value)) throw new AttributeValueError(`the number ${value} is not finite`);
  if (!Number.isSafeInteger(Math.trunc(value))) {
    throw new AttributeValueError(`the number ${value} is beyond ±2^53 and would be rounded`);
  }
  return { N: String(value) };
}

function setAttribute(set: ReadonlySet<unknown>): AttributeValue {
  const members = [...set].filter((member) => member !== undefined);
  if (members.every((member) => typeof member === 'string') && members.length > 0) {
    return { SS: members as string[] };
  }
  if (members.length > 0 && members.every((m) => typeof m === 'number' || m instanceof NumberValue)) {
    return { NS: members.map((m) => (typeof m === 'number' ? (numberAttribute(m).N as string) : String(m))) };
  }
  throw new AttributeValueError('only non-empty sets of strings or of numbers can be stored');
}

function mapAttribute(entries: Iterable<[string, unknown]>, options: ToAttributeOptions): AttributeValue {
  const map: Record<string, AttributeValue> = {};
  for (const [key, member] of entries) {
    if (typeof member === 'function') continue;
    if (member === undefined && options.removeUndefinedValues) continue;
    defineKey(map, key, toAttributeValue(member, options));
  }
  return { M: map };
}

/**
 * The DynamoDB attribute value of a JavaScript value: `null`, booleans, strings, finite numbers
 * within ±2^53, {@link NumberValue}s and bigints (stored exactly), byte arrays, sets of strings or
 * numbers, and lists and maps of these. A map's keys are taken as they are: any own enumerable
 * key is a field name, whatever it spells.
 *
 * @throws AttributeValueError for anything else (`undefined` unless removed, functions at the
 *   top, class instances, non-finite or unsafe numbers).
 * @example
 * toAttributeValue({ constructor: 'Ferrari' }); // { M: { constructor: { S: 'Ferrari' } } }
 */
export function toAttributeValue(value: unknown, options: ToAttributeOptions = {}): AttributeValue {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'boolean':
      return { BOOL: value };
    case 'number':
      return numberAttribute(value);
    case 'bigint':
      return { N: value.toString() };
    case 'object':
      break;
    default:
      throw new AttributeValueError(`a value of type ${typeof value} cannot be stored`);
  }
  if (value === null) return { NULL: true };
  if (value instanceof NumberValue) return { N: value.toString() };
  if (Array.isArray(value)) {
    const kept = value.filter(
      (member) => typeof member !== 'function' && !(member === undefined && options.removeUndefinedValues),
    );
    return { L: kept.map((member) => toAttributeValue(member, options)) };
  }
  if (value instanceof Uint8Array) return { B: value };
  if (value instanceof Set) return setAttribute(value);
  if (value instanceof Map) return mapAttribute(value.entries(), options);
  if (isPlainObject(value)) return mapAttribute(Object.entries(value), options);
  throw new AttributeValueError(`an instance of ${Object.prototype.toString.call(value)} cannot be stored`);
}

/**
 * The JavaScript value of a DynamoDB attribute value. Maps become plain objects whose keys are
 * all own properties, `__proto__` included; their prototype is always `Object.prototype`.
 *
 * @example
 * fromAttributeValue({ M: { __proto__: { S: 'p' } } }); // an object with the own key `__proto__`
 */
export function fromAttributeValue(value: AttributeValue, options: FromAttributeOptions = {}): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return options.wrapNumbers ? options.wrapNumbers(value.N) : Number(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.M !== undefined) {
    const object: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value.M))
      defineKey(object, key, fromAttributeValue(member, options));
    return object;
  }
  if (value.L !== undefined) return value.L.map((member) => fromAttributeValue(member, options));
  if (value.SS !== undefined) return new Set(value.SS);
  if (value.NS !== undefined) {
    return new Set(value.NS.map((n) => (options.wrapNumbers ? options.wrapNumbers(n) : Number(n))));
  }
  if (value.B !== undefined) return value.B;
  if (value.BS !== undefined) return new Set(value.BS);
  throw new AttributeValueError(`unknown attribute value type ${Object.keys(value).join(', ')}`);
}

/**
 * lib-dynamodb's map of where a command's input or output holds values to translate: `{}` means
 * every member is a value, `[]` every element of a list, `null` the node itself, `'*'` every
 * member at the next level.
 */
type KeyNodes = Readonly<Record<string, unknown>> | readonly unknown[] | null;

function translateNode(node: unknown, translate: (value: unknown) => unknown, keyNodes: unknown): unknown {
  if (node === undefined) return undefined;
  if (keyNodes === null) return translate(node);
  if (Array.isArray(keyNodes) || Object.keys(keyNodes as object).length === 0) {
    return allMembers(node, translate);
  }
  const nodes = keyNodes as Record<string, unknown>;
  if (Object.keys(nodes).length === 1 && '*' in nodes) {
    if (Array.isArray(node)) return node.map((member) => translateNode(member, translate, nodes['*']));
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(node as object)) {
      if (typeof member !== 'function') defineKey(out, key, translateNode(member, translate, nodes['*']));
    }
    return out;
  }
  return someMembers(node, translate, nodes);
}

function allMembers(node: unknown, translate: (value: unknown) => unknown): unknown {
  if (Array.isArray(node)) return node.filter((m) => typeof m !== 'function').map((m) => translate(m));
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(node as object)) {
    if (typeof member === 'function') continue;
    const translated = member === undefined ? undefined : translate(member);
    if (translated !== undefined) defineKey(out, key, translated);
  }
  return out;
}

function someMembers(
  node: unknown,
  translate: (value: unknown) => unknown,
  nodes: Record<string, unknown>,
): unknown {
  if (Array.isArray(node)) return node.filter((m) => typeof m !== 'function');
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(node as object)) {
    if (typeof member !== 'function') defineKey(out, key, member);
  }
  for (const [key, child] of Object.entries(nodes)) {
    const member = (node as Record<string, unknown>)[key];
    if (typeof member === 'function' || !Object.hasOwn(node as object, key)) continue;
    const translated = translateNode(member, translate, child);
    if (translated !== undefined) defineKey(out, key, translated);
  }
  return out;
}

/** The one method of a smithy middleware stack used here. */
interface RelativeStack {
  addRelativeTo(
    middleware: unknown,
    options: {
      readonly name: string;
      readonly relation: 'before' | 'after';
      readonly toMiddleware: string;
      readonly override: boolean;
    },
  ): void;
}

/** The parts of a lib-dynamodb command this module relies on. */
interface DocumentCommand {
  readonly inputKeyNodes: KeyNodes;
  readonly outputKeyNodes: KeyNodes;
  readonly clientCommand: { readonly middlewareStack: RelativeStack };
  addMarshallingMiddleware(configuration: unknown): void;
}

function isDocumentCommand(command: unknown): command is DocumentCommand {
  const candidate = command as Partial<DocumentCommand> | null;
  return (
    typeof candidate?.addMarshallingMiddleware === 'function' &&
    candidate.clientCommand !== undefined &&
    'inputKeyNodes' in candidate
  );
}

const hardened = new WeakSet<object>();

/**
 * Makes `doc` translate with {@link toAttributeValue} and {@link fromAttributeValue}: each command
 * it sends gets lib-dynamodb's own middleware (same names, same places in the stack, same key
 * maps), with these translations instead of util-dynamodb's. Returns `doc`.
 */
export function hardenDocumentClient(
  doc: DynamoDBDocumentClient,
  options: ToAttributeOptions & FromAttributeOptions,
): DynamoDBDocumentClient {
  const send = doc.send.bind(doc) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  const write = (value: unknown) => toAttributeValue(value, options);
  const read = (value: unknown) => fromAttributeValue(value as AttributeValue, options);
  (doc as { send: unknown }).send = (command: unknown, ...rest: unknown[]) => {
    if (isDocumentCommand(command) && !hardened.has(command)) {
      hardened.add(command);
      const original = command.addMarshallingMiddleware.bind(command);
      command.addMarshallingMiddleware = (configuration: unknown) => {
        original(configuration);
        const stack = command.clientCommand.middlewareStack;
        stack.addRelativeTo(
          (next: (args: { input: unknown }) => Promise<unknown>) => async (args: { input: unknown }) =>
            next({ ...args, input: translateNode(args.input, write, command.inputKeyNodes) }),
          {
            name: 'DocumentMarshall',
            relation: 'before',
            toMiddleware: 'serializerMiddleware',
            override: true,
          },
        );
        stack.addRelativeTo(
          (next: (args: unknown) => Promise<{ output: unknown }>) => async (args: unknown) => {
            const deserialized = await next(args);
            deserialized.output = translateNode(deserialized.output, read, command.outputKeyNodes);
            return deserialized;
          },
          {
            name: 'DocumentUnmarshall',
            relation: 'before',
            toMiddleware: 'deserializerMiddleware',
            override: true,
          },
        );
      };
    }
    return send(command, ...rest);
  };
  return doc;
}
