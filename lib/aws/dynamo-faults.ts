import {
  type AttributeValue,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  InternalServerError,
  type ServiceInputTypes,
  type ServiceOutputTypes,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type {
  HandlerExecutionContext,
  InitializeHandler,
  InitializeHandlerArguments,
  InitializeHandlerOutput,
} from '@smithy/types';
import type { Image } from './stale-history.js';
import { type ItemKey, type KeySchema, keyId, pick, StaleReads } from './stale-reads.js';

/**
 * What the fault layer injects. Every chance is in [0, 1] and defaults to 0; the layer is then
 * inert except for the conflicts it derives from requests in flight (which DynamoDB raises too).
 */
export interface DynamoFaultPlan {
  /** Seeds the layer's PRNG, so a run of the same requests in the same order meets the same faults. */
  readonly seed: number;
  /** Chance that a TransactWriteItems is cancelled with `TransactionConflict` without being sent. */
  readonly transactionConflict?: number;
  /** Chance that a PutItem, UpdateItem or DeleteItem fails with `TransactionConflictException` without being sent. */
  readonly writeConflict?: number;
  /**
   * Chance that a PutItem, UpdateItem or DeleteItem is applied and its answer then lost: DynamoDB's
   * HTTP 500 `InternalServerError`, after which "the request may or may not have succeeded" (its
   * developer guide, error handling), or a connection that drops once the request has arrived.
   * The SDK sends the write again, and the copy meets its own condition as already written.
   * Transactions are left alone: the SDK gives each a `ClientRequestToken`, and DynamoDB answers a
   * repeat of an applied one as a success.
   */
  readonly lostAnswer?: number;
  /** Chance that an eventually consistent read answers with what the items were `staleMs` ago. */
  readonly staleRead?: number;
  /** How far behind a stale read lags; default 1,000 ms. */
  readonly staleMs?: number;
  /**
   * The clock a lag is measured on; default the wall clock. A test that moves its own clock past
   * minutes in milliseconds passes it, so a write an hour old on that clock is not read stale.
   */
  readonly now?: () => number;
  /**
   * At most this many faults drawn by chance (the four above); unset means no bound. Conflicts with
   * a request in flight do not count against it. A test that wants "the first attempt fails" sets a
   * chance of 1 and a limit of 1.
   */
  readonly limit?: number;
}

/** How many faults of each kind the layer injected so far. */
export interface DynamoFaultCounts {
  /** Transactions cancelled by chance. */
  transactionConflicts: number;
  /** Single-item writes refused by chance. */
  writeConflicts: number;
  /** Transactions or single-item writes refused because a transaction on one of their items was in flight. */
  inFlightConflicts: number;
  /** Reads answered with an earlier state of at least one item. */
  staleReads: number;
  /** Single-item writes applied and answered with a 500 (see `lostAnswer`). */
  lostAnswers: number;
}

const SINGLE_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);
const READS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand']);
const WRITES = new Set([...SINGLE_WRITES, 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);

type Input = Record<string, unknown>;
type Output = Record<string, unknown>;

/** mulberry32: a tiny, fast PRNG that is plenty for drawing faults. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const metadata = { httpStatusCode: 400 };
/** Marks, on a request's context, a write the layer asked for its old state (ALL_OLD). */
const OWN_OLD = Symbol('harvesterDynamoFaultsOwnOld');
/** As the document client stores values (lib/aws/clients.ts), to turn its answers back into the wire format. */
const MARSHALL = { removeUndefinedValues: true, convertClassInstanceToMap: false } as const;

/**
 * Whether a document client sent the request: its marshalling step marks the request's context
 * (the `DDB_MAPPER` feature), and its output reaches this layer already unmarshalled.
 */
function isDocument(context: HandlerExecutionContext): boolean {
  const sdk = (context as { __aws_sdk_context?: { features?: Record<string, unknown> } }).__aws_sdk_context;
  return sdk?.features?.DDB_MAPPER !== undefined;
}

/**
 * A seeded layer of the DynamoDB faults that no local emulator produces: transaction conflicts
 * and eventually consistent reads that lag behind writes. Tests switch it on (`dynamoFaults` of
 * `createAwsClients`); production never installs it. See docs/consistency.md for what it models
 * and where it falls short of DynamoDB.
 *
 * @example
 * const faults = new DynamoFaults({ seed: 7, transactionConflict: 0.2, staleRead: 0.5 });
 * const clients = createAwsClients({ region, endpoint, dynamoFaults: faults });
 * // ... run the code under test, then:
 * expect(faults.counts.transactionConflicts).toBeGreaterThan(0);
 */
export class DynamoFaults {
  /** Faults injected so far, by kind. */
  readonly counts: DynamoFaultCounts = {
    transactionConflicts: 0,
    writeConflicts: 0,
    inFlightConflicts: 0,
    staleReads: 0,
    lostAnswers: 0,
  };
  private plan: DynamoFaultPlan;
  private random: () => number;
  private drawn = 0;
  private raw: DynamoDBClient | undefined;
  private readonly schemas = new Map<string, Promise<KeySchema>>();
  /** Items of transactions in flight through this client (table + key), with how many hold each. */
  private readonly transacting = new Map<string, number>();
  /** Items of single-item writes in flight, which a transaction on the same item collides with. */
  private readonly writing = new Map<string, number>();
  private readonly stale = new StaleReads({
    schema: (table) => this.schema(table),
    draw: () => this.chance(this.plan.staleRead),
    now: () => this.now(),
  });

  /** The plan's clock, or the wall clock. */
  private now(): number {
    return (this.plan.now ?? Date.now)();
  }

  constructor(plan: DynamoFaultPlan) {
    this.plan = plan;
    this.random = mulberry32(plan.seed);
  }

  /** The plan in force. */
  get planned(): DynamoFaultPlan {
    return this.plan;
  }

  /**
   * Resolves once no eventually consistent read can lag behind a write made before the call: a
   * check that reads an index after the writes it checks waits this long, as on DynamoDB.
   */
  settle(): Promise<void> {
    const ms = this.plan.staleRead ? this.staleMs() : 0;
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** Replaces the plan (and reseeds), keeping the counts and what was written: tests arm faults after their setup. */
  set(plan: DynamoFaultPlan): void {
    this.plan = plan;
    this.random = mulberry32(plan.seed);
    this.drawn = 0;
  }

  /**
   * Adds the layer to `client` (and to every document client built on it, which shares its
   * middleware stack). `raw` is a client on the same endpoint without the layer: it reads the
   * items' earlier states and the tables' key schemas, out of band of whatever `client` serializes.
   */
  install(client: DynamoDBClient, raw: DynamoDBClient): void {
    this.raw = raw;
    // Around the deserializer, inside the SDK's retry, as a service error would be: the input is in
    // DynamoDB's wire format (a document client marshalled it already), the output is a document
    // client's own (its unmarshalling sits closer to the deserializer) or the wire format.
    // A single-item write that asks for nothing back is sent asking for its item's old state
    // (ALL_OLD), which spares the layer a read and which the caller never sees. Before the request
    // is serialized; the context tells the layer below which writes it changed.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Input;
        const own =
          this.plan.staleRead !== undefined &&
          this.plan.staleRead > 0 &&
          SINGLE_WRITES.has(context.commandName ?? '') &&
          (input.ReturnValues ?? 'NONE') === 'NONE';
        if (!own) return next(args);
        (context as { [OWN_OLD]?: boolean })[OWN_OLD] = true;
        return next({ ...args, input: { ...input, ReturnValues: 'ALL_OLD' } as never });
      },
      { step: 'initialize', priority: 'low', name: 'harvesterDynamoFaultsOldImage' },
    );
    client.middlewareStack.addRelativeTo(
      (next: InitializeHandler<ServiceInputTypes, ServiceOutputTypes>, context: HandlerExecutionContext) =>
        async (
          args: InitializeHandlerArguments<ServiceInputTypes>,
        ): Promise<InitializeHandlerOutput<ServiceOutputTypes>> => {
          const command = context.commandName ?? '';
          if (!WRITES.has(command) && !READS.has(command)) return next(args);
          const input = args.input as Input;
          if (READS.has(command)) {
            const result = await next(args);
            const output = result.output as unknown as Output;
            if (
              this.plan.staleRead &&
              (await this.stale.lag(command, input, output, this.staleMs(), isDocument(context)))
            )
              this.counts.staleReads++;
            return result;
          }
          const own = (context as { [OWN_OLD]?: boolean })[OWN_OLD] === true;
          return this.write(command, input, () => next(args), isDocument(context), own);
        },
      { name: 'harvesterDynamoFaults', relation: 'before', toMiddleware: 'deserializerMiddleware' },
    );
  }

  /** Closes the out-of-band client. */
  destroy(): void {
    this.raw?.destroy();
  }

  private chance(p: number | undefined): boolean {
    if (!p || (this.plan.limit !== undefined && this.drawn >= this.plan.limit)) return false;
    if (this.random() >= p) return false;
    this.drawn++;
    return true;
  }

  private async write<T extends { output: unknown }>(
    command: string,
    input: Input,
    send: () => Promise<T>,
    document: boolean,
    ownOld: boolean,
  ): Promise<T> {
    const keys = await this.writtenKeys(command, input);
    const ids = keys.map(keyId);
    if (command === 'TransactWriteItemsCommand') {
      const clashes = ids.map((id) => this.transacting.has(id) || this.writing.has(id));
      const byChance = !clashes.includes(true) && this.chance(this.plan.transactionConflict);
      if (clashes.includes(true) || byChance) {
        if (byChance) this.counts.transactionConflicts++;
        else this.counts.inFlightConflicts++;
        // By chance, one action collided (picked by the PRNG); in flight, those on held items.
        const picked = Math.floor(this.random() * ids.length);
        throw canceled(ids.map((_, i) => (byChance ? i === picked : clashes[i]!)));
      }
    } else if (SINGLE_WRITES.has(command)) {
      if (ids.some((id) => this.transacting.has(id))) {
        this.counts.inFlightConflicts++;
        throw conflict();
      }
      if (this.chance(this.plan.writeConflict)) {
        this.counts.writeConflicts++;
        throw conflict();
      }
    }
    const held = command === 'TransactWriteItemsCommand' ? this.transacting : this.writing;
    for (const id of ids) held.set(id, (held.get(id) ?? 0) + 1);
    let result: T;
    try {
      // Earlier states are kept only while a stale read could show them. A single-item write
      // that asked for nothing back brings its own (see install); any other write costs a
      // consistent read of each item first.
      if (ownOld) {
        result = await send();
        const output = result.output as Output;
        const old = output.Attributes as Image | undefined;
        delete output.Attributes;
        const wire = old && document ? (marshall(old, MARSHALL) as Image) : old;
        this.stale.record(ids[0]!, this.now(), wire);
      } else if (!this.plan.staleRead) {
        result = await send();
      } else {
        const before = await Promise.all(keys.map((k) => this.image(k)));
        result = await send();
        const at = this.now();
        for (const [i, image] of before.entries()) this.stale.record(ids[i]!, at, image);
      }
    } finally {
      for (const id of ids) {
        const left = (held.get(id) ?? 1) - 1;
        if (left > 0) held.set(id, left);
        else held.delete(id);
      }
    }
    // Applied, and then answered with a 500: the SDK sends the write again.
    if (SINGLE_WRITES.has(command) && this.chance(this.plan.lostAnswer)) {
      this.counts.lostAnswers++;
      throw lostAnswer();
    }
    return result;
  }

  /** The items a write touches (a condition check writes nothing but holds its item all the same). */
  private async writtenKeys(command: string, input: Input): Promise<ItemKey[]> {
    if (SINGLE_WRITES.has(command)) return [await this.keyOf(input)];
    if (command === 'BatchWriteItemCommand') {
      const requests = input.RequestItems as Record<string, Record<string, Input>[]>;
      return Promise.all(
        Object.entries(requests).flatMap(([TableName, writes]) =>
          writes.map((w) => this.keyOf({ TableName, ...(w.PutRequest ?? w.DeleteRequest) })),
        ),
      );
    }
    const actions = input.TransactItems as Record<string, Input>[];
    return Promise.all(
      actions.map((a) => this.keyOf((a.Put ?? a.Update ?? a.Delete ?? a.ConditionCheck) as Input)),
    );
  }

  private async keyOf(action: Input): Promise<ItemKey> {
    const table = action.TableName as string;
    if (action.Key) return { table, key: action.Key as Image };
    const schema = await this.schema(table);
    return { table, key: pick(action.Item as Image, schema.table) };
  }

  private schema(table: string): Promise<KeySchema> {
    let schema = this.schemas.get(table);
    if (!schema) {
      schema = this.rawClient()
        .send(new DescribeTableCommand({ TableName: table }))
        .then(({ Table }) => ({
          table: (Table?.KeySchema ?? []).map((k) => k.AttributeName!),
          indexes: new Map(
            [...(Table?.GlobalSecondaryIndexes ?? []), ...(Table?.LocalSecondaryIndexes ?? [])].map((i) => [
              i.IndexName!,
              (i.KeySchema ?? []).map((k) => k.AttributeName!),
            ]),
          ),
        }));
      // A failed look-up is asked again next time rather than remembered.
      schema.catch(() => this.schemas.delete(table));
      this.schemas.set(table, schema);
    }
    return schema;
  }

  private async image({ table, key }: ItemKey): Promise<Image | undefined> {
    const { Item } = await this.rawClient().send(
      new GetItemCommand({
        TableName: table,
        Key: key as Record<string, AttributeValue>,
        ConsistentRead: true,
      }),
    );
    return Item as Image | undefined;
  }

  private rawClient(): DynamoDBClient {
    if (!this.raw) throw new Error('DynamoFaults used before install()');
    return this.raw;
  }

  private staleMs(): number {
    return this.plan.staleMs ?? 1_000;
  }
}

/** DynamoDB's 500: the SDK retries it (a server fault); the write may have been applied. */
function lostAnswer(): InternalServerError {
  return new InternalServerError({
    message: 'Internal server error',
    $metadata: { httpStatusCode: 500 },
  });
}

function conflict(): TransactionConflictException {
  return new TransactionConflictException({
    message: 'Transaction is ongoing for the item',
    $metadata: metadata,
  });
}

/** Cancelled as DynamoDB cancels: one reason per action, `TransactionConflict` where it collided. */
function canceled(collided: readonly boolean[]): TransactionCanceledException {
  const codes = collided.map((c) => (c ? 'TransactionConflict' : 'None'));
  return new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    $metadata: metadata,
    CancellationReasons: codes.map((Code) =>
      Code === 'None' ? { Code } : { Code, Message: 'Transaction is ongoing for the item' },
    ),
  });
}
