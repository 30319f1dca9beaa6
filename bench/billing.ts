import { itemBytes, looksMarshalled } from './item-size.js';

/**
 * Billed units of one request, the way AWS bills on-demand DynamoDB, SQS and EventBridge:
 *
 * - a DynamoDB write bills ceil(size / 1 KB) write units, for an update or a put the larger of the
 *   item before and after, for a delete the item before; a refused conditional write still bills
 *   the stored item's size (at least 1); a transaction bills twice, per item;
 * - a read bills ceil(size / 4 KB) read units of the whole item (a projection does not shrink it),
 *   half for an eventually consistent read; BatchGetItem per item, Query and Scan on the sum of the
 *   items read (a count on the items it counted); a key not found still bills the minimum;
 * - SQS bills per 64 KB chunk of a request's payload (a batch of small messages is one chunk);
 *   EventBridge per entry.
 *
 * Sizes come from the items themselves. To know an item's size before an update, or the whole size
 * of an item a projection read, {@link Billing} keeps the last size it saw of every item (a shadow
 * of the tables, by key), learned from the writes' own answers: it asks for `ALL_NEW` / `ALL_OLD`
 * return values when the caller did not, and hides them from the caller again.
 */

const WRITE_UNIT = 1_024;
const READ_UNIT = 4 * 1_024;
const SQS_CHUNK = 64 * 1_024;

/** Requests the counter prices by item size. */
const SIZED = new Set([
  'DynamoDB.PutItem',
  'DynamoDB.UpdateItem',
  'DynamoDB.DeleteItem',
  'DynamoDB.GetItem',
  'DynamoDB.BatchGetItem',
  'DynamoDB.Query',
  'DynamoDB.Scan',
  'DynamoDB.TransactWriteItems',
  'DynamoDB.TransactGetItems',
  'DynamoDB.BatchWriteItem',
]);

type Item = Record<string, unknown>;

/** Write units of an item of `bytes` (at least 1). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / WRITE_UNIT));
}

/** Read units of `bytes` read at once (at least 1), halved for an eventually consistent read. */
export function readUnits(bytes: number, consistent: boolean): number {
  return Math.max(1, Math.ceil(bytes / READ_UNIT)) * (consistent ? 1 : 0.5);
}

/** SQS requests billed for a payload of `bytes` (one per 64 KB chunk, at least 1). */
export function sqsChunks(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / SQS_CHUNK));
}

/** The billing state of one benchmark phase: the shadow of item sizes and each table's key names. */
export class Billing {
  private readonly sizes = new Map<string, number>();
  private readonly keyNames = new Map<string, readonly string[]>();

  /**
   * The input to send: asks for the return values the billing needs when the caller did not.
   * `strip` lists what to remove from the answer again; `stripRefusal`, whether to remove the
   * stored item from a refused conditional write's error.
   */
  prepare(op: string, input: Item): { input: Item; strip: string[]; stripRefusal: boolean } {
    if (!SIZED.has(op)) return { input, strip: [], stripRefusal: false };
    const extra: Item = {};
    const strip: string[] = [];
    if (op === 'DynamoDB.UpdateItem' && input.ReturnValues === undefined) {
      extra.ReturnValues = 'ALL_NEW';
      strip.push('Attributes');
    }
    if ((op === 'DynamoDB.PutItem' || op === 'DynamoDB.DeleteItem') && input.ReturnValues === undefined) {
      extra.ReturnValues = 'ALL_OLD';
      strip.push('Attributes');
    }
    const stripRefusal =
      /^DynamoDB\.(PutItem|UpdateItem|DeleteItem)$/.test(op) &&
      input.ReturnValuesOnConditionCheckFailure === undefined;
    if (stripRefusal) extra.ReturnValuesOnConditionCheckFailure = 'ALL_OLD';
    return { input: { ...input, ...extra }, strip, stripRefusal };
  }

  /** Billed units of a request that answered `output` or failed with `error`. */
  bill(op: string, input: Item, output: Item | undefined, error: unknown): number {
    const table = String(input.TableName ?? '');
    switch (op) {
      case 'DynamoDB.PutItem':
      case 'DynamoDB.UpdateItem':
      case 'DynamoDB.DeleteItem':
        return this.write(op, table, input, output, error);
      case 'DynamoDB.GetItem': {
        const item = output?.Item as Item | undefined;
        const key = this.learnKey(table, input.Key as Item | undefined);
        const size = item ? this.fullSize(key, item) : 0;
        return readUnits(size, input.ConsistentRead === true);
      }
      case 'DynamoDB.BatchGetItem':
        return this.batchGet(input, output);
      case 'DynamoDB.Query':
      case 'DynamoDB.Scan': {
        // A count returns no item but bills every item it read, as a query returning them would:
        // the items' sizes from the shadow (their mean, the count naming no key).
        if (input.Select === 'COUNT') {
          const scanned = Number(output?.ScannedCount ?? 0);
          return readUnits(scanned * this.meanSize(table), input.ConsistentRead === true);
        }
        const items = (output?.Items ?? []) as Item[];
        const bytes = items.reduce((sum, item) => sum + this.fullSize(this.keyOf(table, item), item), 0);
        return readUnits(bytes, input.ConsistentRead === true);
      }
      case 'DynamoDB.TransactWriteItems':
        return this.transaction(input, error);
      case 'DynamoDB.TransactGetItems':
        return 2 * ((input.TransactItems as unknown[] | undefined)?.length ?? 1);
      case 'DynamoDB.BatchWriteItem': {
        const requests = Object.values((input.RequestItems ?? {}) as Record<string, Item[]>).flat();
        return requests.reduce(
          (sum: number, r) =>
            sum + writeUnits(sizeOf((r.PutRequest as Item | undefined)?.Item as Item | undefined)),
          0,
        );
      }
      case 'SQS.SendMessage':
        return sqsChunks(Buffer.byteLength(String(input.MessageBody ?? '')));
      case 'SQS.SendMessageBatch': {
        const entries = (input.Entries ?? []) as { MessageBody?: string }[];
        return sqsChunks(entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody ?? ''), 0));
      }
      case 'SQS.ReceiveMessage': {
        const messages = (output?.Messages ?? []) as { Body?: string }[];
        return sqsChunks(messages.reduce((sum, m) => sum + Buffer.byteLength(m.Body ?? ''), 0));
      }
      case 'EventBridge.PutEvents':
        return (input.Entries as unknown[] | undefined)?.length ?? 1;
      default:
        return 1;
    }
  }

  private write(op: string, table: string, input: Item, output: Item | undefined, error: unknown): number {
    const key = this.learnKey(table, (input.Key ?? input.Item) as Item | undefined);
    const refusedItem = (error as { Item?: Item } | undefined)?.Item;
    const known = key === undefined ? undefined : this.sizes.get(key);
    const before =
      refusedItem !== undefined
        ? sizeOf(refusedItem)
        : op === 'DynamoDB.PutItem' || op === 'DynamoDB.DeleteItem'
          ? sizeOf(output?.Attributes as Item | undefined) || (known ?? 0)
          : (known ?? 0);
    if (error !== undefined) {
      if (key !== undefined && refusedItem !== undefined) this.sizes.set(key, before);
      return writeUnits(before);
    }
    let after = 0;
    if (op === 'DynamoDB.PutItem') after = sizeOf(input.Item as Item);
    if (op === 'DynamoDB.UpdateItem') {
      const attributes = output?.Attributes as Item | undefined;
      after = input.ReturnValues === 'ALL_NEW' && attributes ? sizeOf(attributes) : before;
    }
    if (key !== undefined) {
      if (op === 'DynamoDB.DeleteItem') this.sizes.delete(key);
      else this.sizes.set(key, after);
    }
    return writeUnits(Math.max(before, after));
  }

  private batchGet(input: Item, output: Item | undefined): number {
    let units = 0;
    const requested = (input.RequestItems ?? {}) as Record<
      string,
      { Keys?: Item[]; ConsistentRead?: boolean }
    >;
    const responses = (output?.Responses ?? {}) as Record<string, Item[]>;
    const unprocessed = (output?.UnprocessedKeys ?? {}) as Record<string, { Keys?: Item[] }>;
    for (const [table, request] of Object.entries(requested)) {
      const consistent = request.ConsistentRead === true;
      const found = responses[table] ?? [];
      for (const item of found) units += readUnits(this.fullSize(this.keyOf(table, item), item), consistent);
      const missing = (request.Keys?.length ?? 0) - found.length - (unprocessed[table]?.Keys?.length ?? 0);
      units += Math.max(0, missing) * readUnits(0, consistent);
      if (request.Keys?.[0]) this.learnKey(table, request.Keys[0]);
    }
    return units;
  }

  private transaction(input: Item, error: unknown): number {
    let units = 0;
    for (const entry of (input.TransactItems ?? []) as Item[]) {
      const [kind, body] = Object.entries(entry)[0] as [string, Item];
      const table = String(body.TableName ?? '');
      const key = this.learnKey(table, (body.Key ?? body.Item) as Item | undefined);
      const known = key === undefined ? 0 : (this.sizes.get(key) ?? 0);
      let after = known;
      if (kind === 'Put') after = sizeOf(body.Item as Item);
      if (kind === 'Update') after = Math.max(known, valuesSize(body));
      if (kind === 'Delete') after = 0;
      units += 2 * writeUnits(Math.max(known, after));
      if (key !== undefined && error === undefined && kind !== 'ConditionCheck') {
        if (kind === 'Delete') this.sizes.delete(key);
        else this.sizes.set(key, after);
      }
    }
    return units;
  }

  /** The mean size of the items of `table` the shadow knows (1 KB when it knows none). */
  private meanSize(table: string): number {
    let sum = 0;
    let count = 0;
    for (const [key, size] of this.sizes) {
      if (!key.startsWith(`${table}|`)) continue;
      sum += size;
      count += 1;
    }
    return count === 0 ? WRITE_UNIT : sum / count;
  }

  /** The size of the whole item: what the shadow knows when a projection shortened the answer. */
  private fullSize(key: string | undefined, item: Item): number {
    const seen = sizeOf(item);
    const known = key === undefined ? undefined : this.sizes.get(key);
    return Math.max(seen, known ?? 0);
  }

  private learnKey(table: string, key: Item | undefined): string | undefined {
    if (!key) return undefined;
    if (!this.keyNames.has(table) && (key === undefined || Object.keys(key).length <= 2))
      this.keyNames.set(table, Object.keys(key).sort());
    return this.keyOf(table, key);
  }

  private keyOf(table: string, item: Item): string | undefined {
    const names = this.keyNames.get(table);
    if (!names) return undefined;
    return `${table}|${names.map((n) => JSON.stringify(item[n] ?? null)).join('|')}`;
  }
}

function sizeOf(item: Item | undefined): number {
  if (!item) return 0;
  return itemBytes(item, looksMarshalled(item));
}

/** A transaction's update: its key and values, a lower bound of the item it leaves. */
function valuesSize(body: Item): number {
  return sizeOf(body.Key as Item) + sizeOf(body.ExpressionAttributeValues as Item | undefined);
}
