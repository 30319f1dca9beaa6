import { TooManyRequestsException } from '@aws-sdk/client-lambda';
import { describe, expect, it, vi } from 'vitest';
import { CursorSigner, randomCursorKey } from '../../lib/api/cursors.js';
import type { ApiDeps } from '../../lib/api/deps.js';
import {
  SourceCheckFailedError,
  SourceChecksThrottledError,
  SourceTestsBusyError,
} from '../../lib/api/errors.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { PROBLEM_TYPES, problemFor } from '../../lib/api/problems.js';
import {
  encodeSourceCheckAnswer,
  type Invoke,
  type InvokeAnswer,
  type InvokeRequest,
  invokedSourceCheck,
  type SourceCheckAnswer,
  sourceTestResultOf,
} from '../../lib/api/source-check.js';
import type { SourceTestResult } from '../../lib/api/source-test.js';
import { NumberValue } from '../../lib/json/lossless.js';
import { SourceNotFoundError } from '../../lib/store/errors.js';

/**
 * The API's side of the check function (lib/api/source-check.ts): what it sends, and how each
 * answer Lambda can give — the check's own answers, a failed function, a payload that is no
 * answer, a throttled invocation — becomes the route's status. The invoke is a fake function
 * that answers as Lambda's `InvokeCommand` does, the check function's payload as the Lambda
 * runtime writes it (`JSON.stringify` of what the handler returned).
 */

const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:harvester-source-check';

const result = (sourceId: string): SourceTestResult => ({
  ok: true,
  sourceId,
  connector: 'rest-json',
  request: { url: 'https://api.example.com/records', status: 200, durationMs: 120 },
  auth: 'accepted',
  rateLimit: { limit: 5000, remaining: 4999, resetAt: null },
  page: { items: 2, total: null, hasNextPage: false },
  // A harvested id beyond 2^53: it must arrive as the digits the source sent.
  sample: { id: 'e1', version: 'v1', data: { big: new NumberValue('18446744073709551617'), n: 3 } },
  invalidOnPage: 0,
  problem: null,
});

const text = (value: string) => new TextEncoder().encode(value);
/** The payload Lambda hands back for a handler that returned `value`. */
const returned = (value: unknown): InvokeAnswer => ({ Payload: text(JSON.stringify(value)) });
const answering = (answer: SourceCheckAnswer): InvokeAnswer => returned(encodeSourceCheckAnswer(answer));

function fakeInvoke(respond: (request: InvokeRequest) => InvokeAnswer | Promise<InvokeAnswer>) {
  const requests: InvokeRequest[] = [];
  const invoke: Invoke = async (request) => {
    requests.push(request);
    return respond(request);
  };
  return { invoke, requests };
}

const check = (respond: Parameters<typeof fakeInvoke>[0]) =>
  invokedSourceCheck(fakeInvoke(respond).invoke, FUNCTION_ARN);

/** What the route makes of an answer: its result, or the error it throws. */
async function routeOutcome(respond: Parameters<typeof fakeInvoke>[0], sourceId = 'acme') {
  return sourceTestResultOf(sourceId, await check(respond)(sourceId));
}

describe('invoking the check function', () => {
  it('sends a synchronous invocation of exactly the check function with the source id and nothing else', async () => {
    const { invoke, requests } = fakeInvoke(() => answering({ kind: 'result', result: result('acme') }));

    await invokedSourceCheck(invoke, FUNCTION_ARN)('acme');

    expect(requests).toHaveLength(1);
    expect(requests[0]?.FunctionName).toBe(FUNCTION_ARN);
    expect(requests[0]?.InvocationType).toBe('RequestResponse');
    expect(JSON.parse(new TextDecoder().decode(requests[0]?.Payload))).toEqual({ sourceId: 'acme' });
  });

  it('result: the check’s result, a number beyond 2^53 in the sample kept digit for digit', async () => {
    const answer = await routeOutcome(() => answering({ kind: 'result', result: result('acme') }));

    expect(answer).toMatchObject({ ok: true, sourceId: 'acme', auth: 'accepted', page: { items: 2 } });
    const big = answer.sample?.data.big;
    expect(big).toBeInstanceOf(NumberValue);
    expect(String(big)).toBe('18446744073709551617');
    expect(answer.sample?.data.n).toBe(3);
  });

  it('busy: the 429 of a source whose check slots are all taken, with its Retry-After', async () => {
    const error = await routeOutcome(() =>
      answering({ kind: 'busy', running: 2, retryAfterSeconds: 5 }),
    ).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SourceTestsBusyError);
    expect(problemFor(error)).toMatchObject({
      problem: { type: PROBLEM_TYPES.sourceTestsBusy, status: 429 },
      headers: { 'retry-after': '5' },
    });
    expect((error as Error).message).toContain('2 connection checks of source acme');
  });

  it('not_found: the 404 of an unknown source, naming it', async () => {
    const error = await routeOutcome(() => answering({ kind: 'not_found' }), 'gone').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SourceNotFoundError);
    expect(problemFor(error).problem).toMatchObject({ status: 404, sourceId: 'gone' });
  });

  it('a failed function: 502, keeping the error type but not the message, which may quote anything', async () => {
    const error = await routeOutcome(() => ({
      FunctionError: 'Unhandled',
      Payload: text(
        JSON.stringify({ errorType: 'Sandbox.Timedout', errorMessage: 'Bearer s3cr3t', trace: [] }),
      ),
    })).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SourceCheckFailedError);
    expect(problemFor(error).problem).toMatchObject({ status: 502, title: 'Bad Gateway' });
    expect((error as Error).message).toContain('Unhandled, Sandbox.Timedout');
    expect((error as Error).message).not.toContain('s3cr3t');
  });

  it.each([
    ['no payload at all', { Payload: undefined }],
    ['a payload that is not JSON', { Payload: text('{not json') }],
    ['an answer returned as an object instead of its JSON text', returned({ kind: 'not_found' })],
    ['an answer of another kind', returned(JSON.stringify({ kind: 'maybe' }))],
    ['a result missing its fields', returned(JSON.stringify({ kind: 'result', result: { ok: true } }))],
    [
      'a busy answer with a field too many',
      returned(JSON.stringify({ kind: 'busy', running: 2, retryAfterSeconds: 5, config: {} })),
    ],
    ['the result of another source', answering({ kind: 'result', result: result('other') })],
  ] as const)('a payload that is no check answer (%s): 502', async (_case, payload) => {
    const error = await routeOutcome(() => payload).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SourceCheckFailedError);
    expect(problemFor(error).problem.status).toBe(502);
  });

  it('a throttled invocation (the reserved concurrency is spent): the same 429 as a busy source', async () => {
    const error = await routeOutcome(() => {
      throw new TooManyRequestsException({
        message: 'Rate Exceeded.',
        $metadata: { httpStatusCode: 429 },
        Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
      });
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SourceChecksThrottledError);
    expect(problemFor(error)).toMatchObject({
      problem: { type: PROBLEM_TYPES.sourceTestsBusy, status: 429 },
      headers: { 'retry-after': '5' },
    });
  });

  it('any other invocation error is not taken for a busy stack', async () => {
    const denied = Object.assign(new Error('not authorized to perform lambda:InvokeFunction'), {
      name: 'AccessDeniedException',
    });
    const error = await routeOutcome(() => {
      throw denied;
    }).catch((e: unknown) => e);

    expect(error).toBe(denied);
    expect(problemFor(error).problem.status).toBe(500);
  });
});

describe('POST /sources/{sourceId}/test with a check function', () => {
  const logger = { error: vi.fn(), info: vi.fn(), warn: vi.fn(), debug: vi.fn() };
  // Every store fails loudly: with a check function, the API reads no row and resolves nothing itself.
  const untouchable = new Proxy(
    {},
    { get: () => () => Promise.reject(new Error('store must not be called')) },
  );
  const apiWith = (respond: Parameters<typeof fakeInvoke>[0]) =>
    ({
      sources: untouchable,
      budgets: untouchable,
      sourceTestLeases: untouchable,
      secretBindings: untouchable,
      secretsFor: () => untouchable,
      cursors: new CursorSigner(randomCursorKey()),
      clock: { now: () => 0 },
      logger,
      sourceCheck: check(respond),
    }) as unknown as ApiDeps;
  const post = async (deps: ApiDeps) => {
    const res = await handleApiRequest(apiGatewayEvent({ method: 'POST', url: '/sources/acme/test' }), deps);
    return { status: res.statusCode, headers: res.headers ?? {}, json: JSON.parse(res.body ?? 'null') };
  };

  it('answers the function’s result, its big numbers as the source wrote them', async () => {
    const res = await handleApiRequest(
      apiGatewayEvent({ method: 'POST', url: '/sources/acme/test' }),
      apiWith(() => answering({ kind: 'result', result: result('acme') })),
    );

    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('"big":18446744073709551617');
  });

  it('answers 429 with Retry-After when the function is throttled, and 502 without detail when it fails', async () => {
    const throttled = await post(
      apiWith(() => {
        throw new TooManyRequestsException({ message: 'Rate Exceeded.', $metadata: {} });
      }),
    );
    const failed = await post(apiWith(() => ({ FunctionError: 'Unhandled', Payload: text('{}') })));

    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('5');
    expect(failed.status).toBe(502);
    expect(failed.json.detail).toContain('quote request id');
    expect(logger.error).toHaveBeenCalledWith(
      'request failed',
      expect.objectContaining({ error: expect.objectContaining({ name: 'SourceCheckFailedError' }) }),
    );
  });
});
