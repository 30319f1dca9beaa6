import { describe, expect, it } from 'vitest';
import { classifyDefault, safeReason } from '../../lib/retry/classify.js';
import {
  ClassifiedError,
  ItemValidationError,
  SourceHttpError,
  SourceResponseError,
} from '../../lib/retry/errors.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const URL_WITH_TOKEN = 'https://api.example.com/v1/records?access_token=s3cret&page=2';

function httpError(status: number, headers: Record<string, string> = {}): SourceHttpError {
  return new SourceHttpError(status, headers, '', URL_WITH_TOKEN);
}

/** Undici's shape: `TypeError: fetch failed` with the socket error as its cause. */
function fetchFailed(code: string | undefined, message = 'socket trouble'): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(message), code ? { code } : {}) });
}

describe('classifyDefault for HTTP statuses', () => {
  it.each([
    [408, 'transient'],
    [429, 'transient'],
    [500, 'transient'],
    [502, 'transient'],
    [503, 'transient'],
    [504, 'transient'],
    [507, 'transient'],
    [599, 'transient'],
    [400, 'permanent'],
    [401, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [410, 'permanent'],
    [422, 'permanent'],
    [451, 'permanent'],
    [304, 'permanent'],
  ])('classifies HTTP %i as %s', (status, errorClass) => {
    expect(classifyDefault(httpError(status), NOW).errorClass).toBe(errorClass);
  });

  it('waits as long as Retry-After asks on a transient status', () => {
    expect(classifyDefault(httpError(503, { 'retry-after': '30' }), NOW).waitMs).toBe(30_000);
  });

  it('waits until the rate-limit reset on a 429', () => {
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1_000 + 120) };
    expect(classifyDefault(httpError(429, headers), NOW).waitMs).toBe(120_000);
  });

  it('leaves the wait to the backoff when no header asks for one', () => {
    expect(classifyDefault(httpError(502), NOW)).not.toHaveProperty('waitMs');
  });

  it('ignores Retry-After on a permanent status', () => {
    expect(classifyDefault(httpError(400, { 'retry-after': '30' }), NOW)).toEqual({
      errorClass: 'permanent',
      reason: 'HTTP 400 (bad request) from https://api.example.com/v1/records',
    });
  });

  it('keeps query strings (and the tokens they may carry) out of the reason', () => {
    const { reason } = classifyDefault(httpError(503), NOW);
    expect(reason).toBe('HTTP 503 (service unavailable) from https://api.example.com/v1/records');
    expect(reason).not.toContain('s3cret');
  });
});

describe('classifyDefault for network failures', () => {
  it.each([
    'ECONNRESET',
    'ECONNREFUSED',
    'ETIMEDOUT',
    'ENOTFOUND',
    'EAI_AGAIN',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
  ])('retries a fetch that failed with %s', (code) => {
    expect(classifyDefault(fetchFailed(code), NOW)).toEqual({
      errorClass: 'transient',
      reason: `network error (${code})`,
    });
  });

  it('finds the code inside an AggregateError cause (dual-stack connect)', () => {
    const cause = new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]);
    expect(classifyDefault(new TypeError('fetch failed', { cause }), NOW).errorClass).toBe('transient');
  });

  it('retries a fetch that failed for an unlisted network reason', () => {
    expect(classifyDefault(fetchFailed(undefined, 'other side closed'), NOW)).toEqual({
      errorClass: 'transient',
      reason: 'network error (other side closed)',
    });
  });

  it('does not retry a certificate error', () => {
    expect(classifyDefault(fetchFailed('CERT_HAS_EXPIRED'), NOW).errorClass).toBe('permanent');
  });

  it.each([
    ['TimeoutError', 'request timed out'],
    ['AbortError', 'request aborted'],
  ])('retries a request that ended with a %s', (name, reason) => {
    expect(classifyDefault(new DOMException('The operation was aborted', name), NOW)).toEqual({
      errorClass: 'transient',
      reason,
    });
  });
});

describe('classifyDefault for other errors', () => {
  it('retries a response that was not the expected JSON (a proxy may answer HTML once)', () => {
    const error = new SourceResponseError(
      'response from https://x.test/a is not JSON (text/html)',
      'https://x.test/a',
    );
    expect(classifyDefault(error, NOW).errorClass).toBe('transient');
  });

  it('does not retry a validation error', () => {
    expect(classifyDefault(new ItemValidationError('field `id` is missing'), NOW)).toEqual({
      errorClass: 'permanent',
      reason: 'field `id` is missing',
    });
  });

  it('honours the class a ClassifiedError was thrown with', () => {
    expect(classifyDefault(new ClassifiedError('transient', 'busy', { waitMs: 5 }), NOW)).toEqual({
      errorClass: 'transient',
      reason: 'busy',
      waitMs: 5,
    });
  });

  it('treats an unknown error as permanent, so a bug is never retried forever', () => {
    expect(classifyDefault(new RangeError('index out of range'), NOW)).toEqual({
      errorClass: 'permanent',
      reason: 'RangeError: index out of range',
    });
  });

  it('describes a thrown non-error', () => {
    expect(classifyDefault('boom', NOW).reason).toBe('non-error thrown: boom');
  });
});

describe('safeReason', () => {
  it('strips query strings from every URL in a message', () => {
    expect(safeReason(`failed to GET ${URL_WITH_TOKEN} twice`)).toBe(
      'failed to GET https://api.example.com/v1/records twice',
    );
  });

  it.each([
    [
      'secret ssm:/harvester/a/t may not be sent to http://evil.example (it is bound to https://api.example.com)',
      'secret ssm:/harvester/a/t may not be sent to http://evil.example (it is bound to https://api.example.com)',
    ],
    [
      'bound: https://a.example, https://b.example:8443.',
      'bound: https://a.example, https://b.example:8443.',
    ],
    ['from https://a.example/v1?token=x) twice', 'from https://a.example/v1) twice'],
    [
      'sent to http://127.0.0.1:5 (it is bound to http://127.0.0.1:4)',
      'sent to http://127.0.0.1:5 (it is bound to http://127.0.0.1:4)',
    ],
    ['bound to `https://[::1]:3/x?k=v`.', 'bound to `https://[::1]:3/x`.'],
  ])('keeps a URL followed by punctuation readable: %s', (text, reason) => {
    expect(safeReason(text)).toBe(reason);
  });

  it('masks bearer credentials and GitHub token shapes', () => {
    const reason = safeReason('sent Authorization: Bearer abc.def and ghp_ABCdef123');
    expect(reason).not.toContain('abc.def');
    expect(reason).not.toContain('ABCdef123');
  });

  it('bounds the length of a reason', () => {
    expect(safeReason('x'.repeat(10_000)).length).toBeLessThanOrEqual(300);
  });
});
