import { isItemRead, isItemWrite, type OpStats } from './counter.js';
import { round } from './setup.js';

/** us-east-1 list prices, USD. */
export const PRICES_USD = {
  /** DynamoDB on-demand, per write request unit (1 per ≤ 1 KB write; 2 per item in a transaction). */
  dynamoWriteUnit: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit (1 per strongly consistent read of ≤ 4 KB). */
  dynamoReadUnit: 0.125 / 1e6,
  /** SQS standard, per request (per 64 KB chunk of payload). */
  sqsRequest: 0.4 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  /** Lambda arm64 duration. */
  lambdaGbSecond: 0.0000133334,
  schedulerInvocation: 1 / 1e6,
  putEvent: 1 / 1e6,
} as const;

/** Memory of the page worker function (infra stack). */
export const WORKER_MEMORY_GB = 0.5;

/** Requests the local runtime makes only because it plays a managed service locally. */
const LOCAL_ONLY = new Set(['esm:SQS.ReceiveMessage(empty)', 'esm:Scheduler.ListSchedules']);

export const COST_FORMULA =
  'costPerMillionEntities = (1e6 / entitiesPerPage) × perPage, perPage = ' +
  'WRU × $0.625e-6 [per write ceil(item size / 1 KB), an update the larger of the item before and after, ' +
  'refused conditional writes billed by the stored item (≥ 1), 2 × per item of TransactWriteItems] + ' +
  'RRU × $0.125e-6 [per read ceil(whole item size / 4 KB), halved when eventually consistent; BatchGetItem per ' +
  'item, Query/Scan on the sum of the items read] + ' +
  'SQS × $0.40e-6 [SendMessage(Batch) + non-empty ReceiveMessage + DeleteMessage + ChangeMessageVisibility, per 64 KB chunk] + ' +
  'invocations × $0.20e-6 + invocations × 0.5 GB × handlerSecondsPerPage × $0.0000133334 [Lambda arm64] + ' +
  'CreateSchedule × $1e-6 [EventBridge Scheduler invocations] + PutEvents entries × $1e-6; item sizes by ' +
  "DynamoDB's rules (attribute names + values), see bench/item-size.ts and bench/billing.ts";

/** AWS requests per page, by operation, split into item writes and control plane. */
export interface RequestsPerPage {
  readonly pages: number;
  readonly entitiesPerPage: number;
  readonly byOperation: Record<string, number>;
  readonly itemWrites: number;
  /** The page's reads of its entities' stored versions and hashes (BatchGetItem on the Items table). */
  readonly itemReads: number;
  readonly controlPlane: number;
  readonly controlPlaneEngineOnly: number;
  readonly controlPlaneEventSourceMapping: number;
  readonly total: number;
  /** Per page, the billed units of each operation (DynamoDB WRU/RRU from item sizes, SQS chunks, events). */
  readonly unitsByOperation: Record<string, number>;
  /** Per page, the conditional writes each operation had refused (billed all the same). */
  readonly refusedByOperation: Record<string, number>;
  /** Local-only requests, totals for the whole run (not per page, not priced). */
  readonly excludedTotals: Record<string, number>;
  readonly note: string;
}

/** Divides the counted requests of a run by its pages. */
export function requestsPerPage(
  ops: Record<string, OpStats>,
  pages: number,
  entities: number,
): RequestsPerPage {
  const byOperation: Record<string, number> = {};
  const unitsByOperation: Record<string, number> = {};
  const refusedByOperation: Record<string, number> = {};
  const excludedTotals: Record<string, number> = {};
  let engineControl = 0;
  let esm = 0;
  let itemWrites = 0;
  let itemReads = 0;
  for (const [key, stats] of Object.entries(ops).sort(([a], [b]) => a.localeCompare(b))) {
    if (LOCAL_ONLY.has(key)) {
      excludedTotals[key] = stats.count;
      continue;
    }
    const [caller, op] = key.split(':') as [string, string];
    byOperation[op] = round((byOperation[op] ?? 0) + stats.count / pages, 3);
    unitsByOperation[op] = round((unitsByOperation[op] ?? 0) + stats.units / pages, 3);
    if (stats.refused > 0)
      refusedByOperation[op] = round((refusedByOperation[op] ?? 0) + stats.refused / pages, 3);
    if (isItemWrite(op)) itemWrites += stats.count;
    else if (isItemRead(op)) itemReads += stats.count;
    else if (caller === 'esm') esm += stats.count;
    else engineControl += stats.count;
  }
  return {
    pages,
    entitiesPerPage: round(entities / pages, 2),
    byOperation,
    itemWrites: round(itemWrites / pages, 3),
    itemReads: round(itemReads / pages, 3),
    controlPlane: round((engineControl + esm) / pages, 3),
    controlPlaneEngineOnly: round(engineControl / pages, 3),
    controlPlaneEventSourceMapping: round(esm / pages, 3),
    total: round((itemWrites + itemReads + engineControl + esm) / pages, 3),
    unitsByOperation,
    refusedByOperation,
    excludedTotals,
    note:
      'Counted by an SDK initialize-step middleware on every client, from startRun to the run being terminal, ' +
      'divided by the pages of the run (startRun and the finishing transaction are amortized). ' +
      'Item writes = PutItem or UpdateItem on the Items table (refused conditional ones included); item ' +
      'reads = BatchGetItem on the Items table; control plane = everything else. ' +
      "The local runtime's SQS ReceiveMessage (non-empty) and DeleteMessage are included: they model Lambda's " +
      'SQS event source mapping, which makes (and bills) the same calls in AWS. Excluded: empty long polls ' +
      '(idle polling, a fixed cost per queue, not per page) and Scheduler ListSchedules (the local stand-in for ' +
      'EventBridge Scheduler firing schedules itself).',
  };
}

/** Cost of one million entities, by service, USD. */
export interface Cost {
  readonly totalUsd: number;
  readonly byService: Record<'dynamodb' | 'sqs' | 'lambda' | 'scheduler' | 'events', number>;
  readonly handlerSecondsPerPage: number;
}

/**
 * Prices the per-page units. `invocationsPerPage` and `handlerSeconds` come from the measured
 * handler durations (or a modeled one), at {@link WORKER_MEMORY_GB}.
 */
export function costPerMillion(
  perPage: RequestsPerPage,
  invocationsPerPage: number,
  handlerSeconds: number,
): Cost {
  const p = PRICES_USD;
  let wru = 0;
  let rru = 0;
  let sqs = 0;
  let scheduler = 0;
  let events = 0;
  for (const [op, units] of Object.entries(perPage.unitsByOperation)) {
    const [service, qualified] = op.split('.') as [string, string];
    // The counter qualifies some operations (`BatchGetItem(Items)`, `Query(COUNT)`): priced as the command.
    const command = qualified.replace(/\(.*\)$/, '');
    if (service === 'DynamoDB') {
      // The counter's units are billed units already (transactions doubled, sizes rounded up).
      if (/^(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)/.test(command)) wru += units;
      else if (/^(GetItem|Query|Scan|BatchGetItem|TransactGetItems)$/.test(command)) rru += units;
    } else if (service === 'SQS') sqs += units;
    else if (op === 'Scheduler.CreateSchedule') scheduler += units;
    else if (op === 'EventBridge.PutEvents') events += units;
  }
  const lambda =
    invocationsPerPage * (p.lambdaRequest + WORKER_MEMORY_GB * handlerSeconds * p.lambdaGbSecond);
  const pagesPerMillion = 1e6 / perPage.entitiesPerPage;
  const byService = {
    dynamodb: round(pagesPerMillion * (wru * p.dynamoWriteUnit + rru * p.dynamoReadUnit), 4),
    sqs: round(pagesPerMillion * sqs * p.sqsRequest, 4),
    lambda: round(pagesPerMillion * lambda, 4),
    scheduler: round(pagesPerMillion * scheduler * p.schedulerInvocation, 4),
    events: round(pagesPerMillion * events * p.putEvent, 4),
  };
  const totalUsd = round(
    Object.values(byService).reduce((sum, v) => sum + v, 0),
    4,
  );
  return { totalUsd, byService, handlerSecondsPerPage: round(handlerSeconds, 3) };
}
