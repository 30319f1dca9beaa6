import { unmarshall } from '@aws-sdk/util-dynamodb';
import { readStoredNumber } from '../json/lossless.js';
import { keyConditionTest } from './key-condition.js';
import { type Image, projectImage, StaleHistory } from './stale-history.js';

type Request = Record<string, unknown>;
type Output = Record<string, unknown>;

/** A table's primary key and its indexes' keys, by attribute name. */
export interface KeySchema {
  readonly table: readonly string[];
  readonly indexes: ReadonlyMap<string, readonly string[]>;
}

/** An item's table and primary key, in DynamoDB's wire format. */
export interface ItemKey {
  readonly table: string;
  readonly key: Image;
}

/** What {@link StaleReads} asks of the fault layer. */
export interface StaleReadDeps {
  schema(table: string): Promise<KeySchema>;
  /** Draws whether this read lags (seeded, and counted against the plan's limit). */
  draw(): boolean;
  /** The clock writes and lags are measured on. */
  now(): number;
}

/**
 * An item's identity: its table and its key's values in the wire format, in a stable order. A
 * document client's key values (a string, a number) are turned into the wire format first.
 */
export function keyId({ table, key }: ItemKey): string {
  const names = Object.keys(key).sort();
  return JSON.stringify([table, ...names.map((name) => [name, wire(key[name])])]);
}

function wire(value: unknown): unknown {
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number' || typeof value === 'bigint') return { N: String(value) };
  if (value instanceof Uint8Array) return { B: Buffer.from(value).toString('base64') };
  // Already a wire value ({ S: … }), or a document client's NumberValue.
  if (value && typeof value === 'object' && !('S' in value || 'N' in value || 'B' in value))
    return { N: String(value) };
  return value;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(wire(a)) === JSON.stringify(wire(b));
}

/** The attribute values a query's key condition fixes by equality (`sourceId = :s`), by attribute name. */
function equalities(input: Request): Image {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const condition = (input.KeyConditionExpression as string | undefined) ?? '';
  const fixed: Image = {};
  for (const [, name, value] of condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g))
    if (values[value!] !== undefined) fixed[names[name!] ?? name!] = values[value!];
  return fixed;
}

/** The attributes `names` of `item`. */
export function pick(item: Image, names: readonly string[]): Image {
  return Object.fromEntries(names.map((name) => [name, item[name]]));
}

/**
 * Eventually consistent reads that lag behind writes. Each write the layer lets through is
 * recorded with the item's state before it; a lagging read answers as of `lagMs` ago: an item
 * written since answers as it was before its earliest write in that window, absent if it did not
 * exist. Query and Scan can only change what DynamoDB returned: an item deleted since does not
 * come back, and a filtered read only drops items (the layer does not evaluate filters, so it
 * cannot tell whether an earlier state matched).
 */
export class StaleReads {
  private readonly history = new StaleHistory();

  constructor(private readonly deps: StaleReadDeps) {}

  /** Notes a write of `id` that just landed, and what the item was before it. */
  record(id: string, at: number, before: Image | undefined): void {
    this.history.record(id, at, before);
  }

  /**
   * Rewrites `output` of an eventually consistent read as of `lagMs` ago, if this read draws a
   * lag and something it reads changed since. `document` says the output is a document client's
   * (unmarshalled), so earlier states are handed back in that form too. Returns whether it did.
   */
  async lag(
    command: string,
    input: Request,
    output: Output,
    lagMs: number,
    document: boolean,
  ): Promise<boolean> {
    const now = this.deps.now();
    if (this.history.empty(now, lagMs)) return false;
    const since = now - lagMs;
    const form = (image: Image, request: Request): Image => {
      const projected = projectImage(image, request);
      return document ? unmarshall(projected as never, { wrapNumbers: readStoredNumber }) : projected;
    };
    if (command === 'BatchGetItemCommand') {
      const responses = (output.Responses ?? {}) as Record<string, Image[]>;
      let lagged = false;
      for (const [table, request] of Object.entries(input.RequestItems as Record<string, Request>)) {
        if (request.ConsistentRead) continue;
        const keys = (request.Keys as Image[]).map((key) => ({ table, key }));
        const answer = await this.lagKeys(keys, responses[table] ?? [], since, (i) => form(i, request));
        if (answer) responses[table] = answer;
        lagged ||= answer !== undefined;
      }
      return lagged;
    }
    // Reads of a secondary index are never consistent; base-table reads only when asked.
    if (input.ConsistentRead && !input.IndexName) return false;
    const table = input.TableName as string;
    if (command === 'GetItemCommand') {
      const current = output.Item ? [output.Item as Image] : [];
      const answer = await this.lagKeys([{ table, key: input.Key as Image }], current, since, (i) =>
        form(i, input),
      );
      if (!answer) return false;
      if (answer[0]) output.Item = answer[0];
      else delete output.Item;
      return true;
    }
    const items = (output.Items ?? []) as Image[];
    if (items.length === 0 && command !== 'QueryCommand') return false;
    const answer = await this.lagItems(table, items, since, input, output, (i) => form(i, input));
    if (!answer) return false;
    output.Items = answer;
    output.Count = answer.length;
    return true;
  }

  private async lagKeys(
    keys: readonly ItemKey[],
    current: readonly Image[],
    since: number,
    form: (image: Image) => Image,
  ): Promise<Image[] | undefined> {
    const changed = keys.filter((k) => this.history.before(keyId(k), since));
    if (changed.length === 0 || !this.deps.draw()) return undefined;
    // A projection may leave key attributes out: an item is the requested key its values match.
    const same = (item: Image, k: ItemKey) =>
      Object.entries(k.key).every(([name, v]) => item[name] === undefined || sameValue(item[name], v));
    const answer = new Map<string, Image>();
    for (const item of current) {
      const k = keys.find((candidate) => same(item, candidate));
      answer.set(k ? keyId(k) : JSON.stringify(item), item);
    }
    for (const k of changed) {
      const earlier = this.history.before(keyId(k), since)!.image;
      if (earlier) answer.set(keyId(k), form(earlier));
      else answer.delete(keyId(k));
    }
    return [...answer.values()];
  }

  private async lagItems(
    table: string,
    items: readonly Image[],
    since: number,
    input: Request,
    output: Output,
    form: (image: Image) => Image,
  ): Promise<Image[] | undefined> {
    const schema = await this.deps.schema(table);
    // A projection may leave key attributes out; the key condition's equalities name them.
    const known = equalities(input);
    const ids = items.map((item) => keyId({ table, key: pick({ ...known, ...item }, schema.table) }));
    const indexKeys = input.IndexName ? (schema.indexes.get(input.IndexName as string) ?? []) : [];
    const inIndex = (image: Image) => !indexKeys.some((name) => image[name] === undefined);
    const gone = this.leftTheRange(table, new Set(ids), since, input, output, inIndex);
    if ((!ids.some((id) => this.history.before(id, since)) && gone.length === 0) || !this.deps.draw())
      return undefined;
    const kept = items.flatMap((item, i) => {
      const earlier = this.history.before(ids[i]!, since);
      if (!earlier) return [item];
      const image = earlier.image;
      // An item that was not there, or not in the index (a sparse index's key missing), drops out.
      if (!image || indexKeys.some((name) => image[name] === undefined)) return [];
      return [input.FilterExpression ? item : form(image)];
    });
    return [...kept, ...gone.map(form)];
  }

  /**
   * Earlier states that a query's range held before a write moved the item out of it (a heartbeat
   * that left the silent range, a row that left a sparse index), which a lagging index still
   * returns. Only for a whole, unfiltered query whose key condition the layer can read.
   */
  private leftTheRange(
    table: string,
    returned: ReadonlySet<string>,
    since: number,
    input: Request,
    output: Output,
    inIndex: (image: Image) => boolean,
  ): Image[] {
    if (input.FilterExpression || input.Limit !== undefined || output.LastEvaluatedKey) return [];
    const test = keyConditionTest(input);
    if (!test) return [];
    const gone: Image[] = [];
    for (const [id, earlier] of this.history.writtenSince(since)) {
      const image = earlier.image;
      if (returned.has(id) || !image || JSON.parse(id)[0] !== table) continue;
      if (inIndex(image) && test(image)) gone.push(image);
    }
    return gone;
  }
}
