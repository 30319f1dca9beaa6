import { z } from 'zod';
import type { EngineDeps } from '../engine/index.js';
import { parseJson, stringifyJson } from '../json/lossless.js';
import { SourceNotFoundError } from '../store/errors.js';
import { SourceCheckFailedError, SourceChecksThrottledError, SourceTestsBusyError } from './errors.js';
import { SourceIdSchema } from './schemas/common.js';
import {
  SOURCE_TEST_TIMEOUT_MS,
  type SourceTestResult,
  SourceTestResultSchema,
  testSource,
} from './source-test.js';

/**
 * Where a connection check runs. On AWS it runs in a function of its own
 * (functions/source-check.ts), the only one besides the page worker whose role reads connector
 * secrets: the API function asks it by source id and holds no secret permission at all. Locally
 * (the dev server, the tests) it runs in the API's process. Both go through {@link runSourceCheck},
 * so a check answers the same wherever it runs.
 */

/** What the check function is sent: a source id, never a config (it reads the row itself). */
export const SourceCheckRequestSchema = z.strictObject({ sourceId: SourceIdSchema });

/** What a check answers: its result, a source whose check slots are all taken, or no such source. */
export const SourceCheckAnswerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('result'), result: SourceTestResultSchema }),
  z.strictObject({
    kind: z.literal('busy'),
    running: z.number().int().positive(),
    retryAfterSeconds: z.number().int().positive(),
  }),
  z.strictObject({ kind: z.literal('not_found') }),
]);

/** A check's answer. */
export type SourceCheckAnswer = z.infer<typeof SourceCheckAnswerSchema>;

/** Runs the connection check of one source, wherever that happens (see the module documentation). */
export type SourceCheck = (sourceId: string) => Promise<SourceCheckAnswer>;

/**
 * The check itself: reads the source's row (trusted only as far as its MAC verifies, in
 * {@link testSource}) and checks it, holding one of its check slots.
 */
export async function runSourceCheck(deps: EngineDeps, sourceId: string): Promise<SourceCheckAnswer> {
  const source = await deps.sources.get(sourceId);
  if (!source) return { kind: 'not_found' };
  try {
    return { kind: 'result', result: await testSource(deps, source) };
  } catch (error) {
    if (!(error instanceof SourceTestsBusyError)) throw error;
    return { kind: 'busy', running: error.running, retryAfterSeconds: error.retryAfterSeconds };
  }
}

/**
 * The answer as `POST /sources/{sourceId}/test` gives it: the result, or the error its status
 * comes from (404, 429).
 */
export function sourceTestResultOf(sourceId: string, answer: SourceCheckAnswer): SourceTestResult {
  if (answer.kind === 'not_found')
    throw new SourceNotFoundError(`source ${sourceId} not found`, { sourceId });
  if (answer.kind === 'busy')
    throw new SourceTestsBusyError(sourceId, answer.running, answer.retryAfterSeconds);
  return answer.result;
}

/**
 * The answer as the check function returns it: its lossless JSON text. Lambda writes a handler's
 * result with `JSON.stringify`, which would turn a harvested number beyond 2^53 in the sample
 * (a `NumberValue`) into an object; as text, it arrives as the digits the source sent.
 */
export function encodeSourceCheckAnswer(answer: SourceCheckAnswer): string {
  return stringifyJson(answer);
}

/** One synchronous invocation, as the Lambda client's `InvokeCommand` takes and answers it. */
export interface InvokeRequest {
  readonly FunctionName: string;
  readonly InvocationType: 'RequestResponse';
  readonly Payload: Uint8Array;
}

/** What {@link InvokeRequest} is answered (`FunctionError` set when the function failed). */
export interface InvokeAnswer {
  readonly FunctionError?: string | undefined;
  readonly Payload?: Uint8Array | undefined;
}

/** Invokes a function; throws what the Lambda client throws (`TooManyRequestsException`, …). */
export type Invoke = (request: InvokeRequest) => Promise<InvokeAnswer>;

/**
 * The check run by the check function, invoked synchronously. A throttled invocation (the
 * function's reserved concurrency is spent) answers 429 like a busy source; a failed function or
 * an answer that is not a check's answers 502, its reason left in the API's log.
 */
export function invokedSourceCheck(invoke: Invoke, functionName: string): SourceCheck {
  return async (sourceId) => {
    let answer: InvokeAnswer;
    try {
      answer = await invoke({
        FunctionName: functionName,
        InvocationType: 'RequestResponse',
        Payload: new TextEncoder().encode(JSON.stringify({ sourceId })),
      });
    } catch (error) {
      if (error instanceof Error && error.name === 'TooManyRequestsException')
        // The longest a running check takes: by then a slot is free again.
        throw new SourceChecksThrottledError(Math.ceil(SOURCE_TEST_TIMEOUT_MS / 1_000));
      throw error;
    }
    const text = new TextDecoder().decode(answer.Payload ?? new Uint8Array());
    if (answer.FunctionError) {
      // Lambda's error payload ({errorType, errorMessage, trace}): only its type is kept, since
      // a message may quote anything the check had in hand.
      const errorType = errorTypeOf(text);
      throw new SourceCheckFailedError(
        `the connection check function failed (${answer.FunctionError}${errorType ? `, ${errorType}` : ''})`,
      );
    }
    const json = decoded(text);
    if (json === undefined)
      throw new SourceCheckFailedError(
        "the connection check function's answer is not the JSON text of an answer",
      );
    const parsed = SourceCheckAnswerSchema.safeParse(json);
    if (!parsed.success)
      throw new SourceCheckFailedError(
        `the connection check function answered something else than a check's answer: ${parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '(answer)'}: ${issue.message}`)
          .join('; ')}`,
      );
    if (parsed.data.kind === 'result' && parsed.data.result.sourceId !== sourceId)
      throw new SourceCheckFailedError(
        `the connection check function answered for source ${parsed.data.result.sourceId}, not ${sourceId}`,
      );
    return parsed.data;
  };
}

/**
 * The answer out of the payload, a JSON string holding the answer's lossless JSON text
 * ({@link encodeSourceCheckAnswer}); undefined for any other payload.
 */
function decoded(text: string): unknown {
  try {
    const inner: unknown = JSON.parse(text);
    return typeof inner === 'string' ? (parseJson(inner) ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

function errorTypeOf(text: string): string | undefined {
  try {
    const payload: unknown = JSON.parse(text);
    const type = (payload as { errorType?: unknown } | null)?.errorType;
    return typeof type === 'string' ? type.slice(0, 100) : undefined;
  } catch {
    return undefined;
  }
}
