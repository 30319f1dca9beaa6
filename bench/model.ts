import { LOAD_CONCURRENCY } from '../lib/store/items.js';
import type { RequestsPerPage } from './cost.js';
import { isItemWrite } from './counter.js';
import { round } from './setup.js';

/**
 * Typical in-region latencies from a Lambda function, ms. Assumptions, not measurements: single-
 * item DynamoDB reads and writes take single-digit ms (5), a transaction about twice that, an
 * SQS SendMessage ~10 ms, and the event source mapping hands a waiting message to a warm
 * function in ~20 ms (long-polling pollers; the delete happens after the invocation, off the
 * page's critical path).
 */
export const AWS_LATENCY_MS = {
  dynamoRead: 5,
  dynamoWrite: 5,
  dynamoTransaction: 10,
  sqsSend: 10,
  eventSourceMappingPickup: 20,
} as const;

export const MODEL_ASSUMPTION =
  'modeled, not measured: per page = measured bare-loop fetch time per page + ' +
  `ceil(item writes / ${LOAD_CONCURRENCY}) × ${AWS_LATENCY_MS.dynamoWrite} ms (the page's ${LOAD_CONCURRENCY}-way parallel item writes) + ` +
  `every engine control-plane request in sequence (DynamoDB read/write ${AWS_LATENCY_MS.dynamoRead} ms, ` +
  `transaction ${AWS_LATENCY_MS.dynamoTransaction} ms, SQS SendMessage ${AWS_LATENCY_MS.sqsSend} ms) + ` +
  `${AWS_LATENCY_MS.eventSourceMappingPickup} ms event source mapping pickup; CPU time (JSON, normalize) neglected; ` +
  'request counts are the ones measured on the emulator';

/** The pipeline's time on AWS, estimated from the measured request counts. */
export interface AwsModel {
  readonly modeledAwsPipelineSeconds: number;
  readonly modeledAwsOverheadRatio: number;
  /** Per page: what a Lambda invocation would last (the pickup excluded). */
  readonly modeledHandlerMsPerPage: number;
  readonly assumption: string;
}

/** Estimates the pipeline on AWS: the same pages and requests, at {@link AWS_LATENCY_MS}. */
export function modelAws(perPage: RequestsPerPage, bareLoopSeconds: number): AwsModel {
  const L = AWS_LATENCY_MS;
  const fetchMs = (bareLoopSeconds * 1_000) / perPage.pages;
  let controlMs = 0;
  for (const [op, count] of Object.entries(perPage.byOperation)) {
    // The event source mapping's receive and delete are the pickup below, not the handler's work.
    if (isItemWrite(op) || (op.startsWith('SQS.') && op !== 'SQS.SendMessage')) continue;
    if (op === 'SQS.SendMessage') controlMs += count * L.sqsSend;
    else if (op === 'DynamoDB.TransactWriteItems') controlMs += count * L.dynamoTransaction;
    else if (/^DynamoDB\.(GetItem|Query|Scan|BatchGetItem)/.test(op)) controlMs += count * L.dynamoRead;
    else controlMs += count * L.dynamoWrite;
  }
  const itemMs = Math.ceil(perPage.itemWrites / LOAD_CONCURRENCY) * L.dynamoWrite;
  const handlerMs = fetchMs + itemMs + controlMs;
  const seconds = (perPage.pages * (handlerMs + L.eventSourceMappingPickup)) / 1_000;
  return {
    modeledAwsPipelineSeconds: round(seconds, 2),
    modeledAwsOverheadRatio: round(seconds / bareLoopSeconds, 2),
    modeledHandlerMsPerPage: round(handlerMs, 1),
    assumption: MODEL_ASSUMPTION,
  };
}
