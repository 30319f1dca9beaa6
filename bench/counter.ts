import type { HandlerExecutionContext, InitializeHandlerArguments, Pluggable } from '@smithy/types';
import { Billing } from './billing.js';

/**
 * Counts the AWS API requests a benchmark phase makes, through an SDK middleware added to every
 * client (`createAwsClients({ middleware })`). It sits in the initialize step, so one call is
 * counted once however often the SDK retries it, and its duration covers serialization,
 * signing, retries and the emulator's answer: the time the caller spends inside the SDK.
 */

/** Who made a request: the engine (what a Lambda would do) or the local runtime's pollers (the event source mapping). */
export type Caller = 'engine' | 'esm';

/** Totals of one operation. */
export interface OpStats {
  count: number;
  /**
   * Billed units (see billing.ts): DynamoDB write or read units from item sizes (refused
   * conditional writes and transaction doubling included), SQS 64 KB chunks, event entries.
   */
  units: number;
  /** Conditional writes (or transactions) the table refused: billed all the same. */
  refused: number;
  /** Sum of request durations, ms (parallel requests overlap). */
  durationMs: number;
}

/** A closed time interval, ms on the `performance.now()` scale. */
export type Interval = readonly [start: number, end: number];

/**
 * Items-table writes are the only "item writes"; every other request is control plane. Item
 * writes are UpdateItem on named attributes (fenced, never a whole-item put); PutItem counts too.
 */
const ITEM_WRITE = /^DynamoDB\.(PutItem|UpdateItem)\(Items\)$/;

/** Whether an operation key (`Service.Command`) is an item write on the Items table. */
export function isItemWrite(op: string): boolean {
  return ITEM_WRITE.test(op);
}

/** Whether an operation key is the page's read of its entities' stored versions (BatchGetItem on Items). */
export function isItemRead(op: string): boolean {
  return op === 'DynamoDB.BatchGetItem(Items)';
}

/**
 * The counter. `plugin(caller)` returns the middleware for one set of clients; `snapshot()`
 * copies the totals; `reset()` starts a new phase.
 */
export class RequestCounter {
  ops = new Map<string, OpStats>();
  /** Item sizes seen so far: kept across {@link reset}, since a re-read phase prices the items the first run stored. */
  readonly billing = new Billing();
  /** Handler durations (receive answered → delete/visibility change sent), one per message handled. */
  handlerMs: number[] = [];
  /** Engine request intervals by the run or source they touched (`run:<id>` / `source:<id>`). */
  requestIntervals = new Map<string, Interval[]>();
  /** Handler intervals by `source:<id>`, from the page message body. */
  handlerIntervals = new Map<string, Interval[]>();
  /** When the last engine request ended (`performance.now()`): a run's end is its last write. */
  lastEngineEndedAt = 0;
  private inFlight = new Map<string, { at: number; key: string | undefined }>();

  /** Forgets everything counted so far. */
  reset(): void {
    this.ops = new Map();
    this.handlerMs = [];
    this.requestIntervals = new Map();
    this.handlerIntervals = new Map();
    this.inFlight = new Map();
    this.lastEngineEndedAt = 0;
  }

  /** Counts of each `Caller:Service.Operation`. */
  snapshot(): Record<string, OpStats> {
    return Object.fromEntries([...this.ops].map(([op, stats]) => [op, { ...stats }]));
  }

  /** The middleware for the clients of one caller. */
  plugin(caller: Caller): Pluggable<object, object> {
    return {
      applyToStack: (stack) => {
        stack.add(
          (next, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<object>) => {
            const started = performance.now();
            const op = operationOf(context);
            const { input, strip, stripRefusal } = this.billing.prepare(
              op,
              args.input as Record<string, unknown>,
            );
            try {
              const result = await next({ ...args, input });
              const output = result.output as Record<string, unknown>;
              this.record(caller, op, input, output, undefined, started);
              for (const field of strip) delete output[field];
              return result;
            } catch (error) {
              this.record(caller, op, input, undefined, error ?? new Error('failed'), started);
              if (stripRefusal && error && typeof error === 'object' && 'Item' in error)
                delete (error as { Item?: unknown }).Item;
              throw error;
            }
          },
          { step: 'initialize', name: `benchRequestCounter-${caller}`, priority: 'low' },
        );
      },
    };
  }

  private record(
    caller: Caller,
    operation: string,
    input: Record<string, unknown>,
    output: Record<string, unknown> | undefined,
    error: unknown,
    started: number,
  ): void {
    const ended = performance.now();
    let op = operation;
    const units = this.billing.bill(op, input, output, error);
    const command = op.split('.')[1] ?? '';
    if (/^DynamoDB\.(PutItem|UpdateItem)$/.test(op) && String(input.TableName).endsWith('-items'))
      op = `${op}(Items)`;
    if (
      op === 'DynamoDB.BatchGetItem' &&
      Object.keys(input.RequestItems ?? {}).every((t) => t.endsWith('-items'))
    )
      op = `${op}(Items)`;
    // A count (the completeness check at a full or reconciliation run's end, the dead-letter
    // counts): priced like any query, by the size of what it read, however little it returns.
    if (op === 'DynamoDB.Query' && input.Select === 'COUNT') op = 'DynamoDB.Query(COUNT)';
    if (op === 'SQS.ReceiveMessage') {
      const messages = (output?.Messages ?? []) as { Body?: string; ReceiptHandle?: string }[];
      if (messages.length === 0) op = 'SQS.ReceiveMessage(empty)';
      if (caller === 'esm') for (const m of messages) this.handlerStarted(m, ended);
    }
    if (caller === 'esm' && (command === 'DeleteMessage' || command === 'ChangeMessageVisibility'))
      this.handlerEnded(String(input.ReceiptHandle ?? ''), started);
    const key = `${caller}:${op}`;
    const stats = this.ops.get(key) ?? { count: 0, units: 0, refused: 0, durationMs: 0 };
    stats.count += 1;
    stats.units += units;
    if (error !== undefined && isConditionRefusal(error)) stats.refused += 1;
    stats.durationMs += ended - started;
    this.ops.set(key, stats);
    if (caller === 'engine') {
      this.lastEngineEndedAt = Math.max(this.lastEngineEndedAt, ended);
      const owner = ownerOf(input);
      if (owner) push(this.requestIntervals, owner, [started, ended]);
    }
  }

  private handlerStarted(message: { Body?: string; ReceiptHandle?: string }, at: number): void {
    if (!message.ReceiptHandle) return;
    let key: string | undefined;
    try {
      const body = JSON.parse(message.Body ?? '{}') as { sourceId?: unknown };
      if (typeof body.sourceId === 'string') key = `source:${body.sourceId}`;
    } catch {
      key = undefined;
    }
    this.inFlight.set(message.ReceiptHandle, { at, key });
  }

  private handlerEnded(receiptHandle: string, at: number): void {
    const started = this.inFlight.get(receiptHandle);
    if (!started) return;
    this.inFlight.delete(receiptHandle);
    this.handlerMs.push(at - started.at);
    if (started.key) push(this.handlerIntervals, started.key, [started.at, at]);
  }
}

/** `Service.Operation` of a request, e.g. `DynamoDB.UpdateItem`. */
function operationOf(context: HandlerExecutionContext): string {
  const service = (context.clientName ?? 'Unknown').replace(/Client$/, '');
  const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
  return `${service}.${command}`;
}

function isConditionRefusal(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'ConditionalCheckFailedException' || name === 'TransactionCanceledException';
}

function push(map: Map<string, Interval[]>, key: string, interval: Interval): void {
  const list = map.get(key);
  if (list) list.push(interval);
  else map.set(key, [interval]);
}

/** A DynamoDB attribute, plain (document client before marshalling) or marshalled (`{ S: … }`). */
function plain(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string')
    return (value as { S: string }).S;
  return undefined;
}

/** The run or source a request touches, read from its key, item or message body. */
export function ownerOf(input: Record<string, unknown>): string | undefined {
  const transact = (input.TransactItems as Record<string, Record<string, unknown>>[] | undefined)?.[0];
  const inner = transact ? Object.values(transact)[0] : input;
  const record = (inner?.Key ?? inner?.Item ?? inner?.ExpressionAttributeValues) as
    | Record<string, unknown>
    | undefined;
  const sourceId = plain(record?.sourceId) ?? plain(record?.[':sourceId']);
  if (sourceId) return `source:${sourceId}`;
  const runId = plain(record?.runId);
  if (runId) return `run:${runId}`;
  if (typeof input.MessageBody === 'string') {
    try {
      const body = JSON.parse(input.MessageBody) as { sourceId?: unknown };
      if (typeof body.sourceId === 'string') return `source:${body.sourceId}`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
