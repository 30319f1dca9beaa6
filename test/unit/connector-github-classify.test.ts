import { describe, expect, it } from 'vitest';
import { githubIssuesConnector } from '../../lib/connectors/github-issues/index.js';
import { SourceHttpError } from '../../lib/retry/errors.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const RESET_IN_10_MIN = String(NOW / 1_000 + 600);
const URL_ = 'https://api.github.com/repos/octo/hello/issues?per_page=100';

function githubError(status: number, headers: Record<string, string>, body = ''): SourceHttpError {
  return new SourceHttpError(status, headers, body, URL_);
}

const classify = (error: unknown) => githubIssuesConnector.classify(error, NOW);

describe('github-issues classify', () => {
  it.each([403, 429])('waits for the reset when HTTP %i says the primary rate limit is used up', (status) => {
    const error = githubError(status, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': RESET_IN_10_MIN });
    expect(classify(error)).toMatchObject({ errorClass: 'transient', waitMs: 600_000 });
  });

  it('waits a minute when the limit is used up but the reset header is missing', () => {
    expect(classify(githubError(403, { 'x-ratelimit-remaining': '0' }))).toMatchObject({
      errorClass: 'transient',
      waitMs: 60_000,
    });
  });

  it('treats a 403 with requests remaining as a permission problem, never retried', () => {
    const error = githubError(
      403,
      { 'x-ratelimit-remaining': '4999' },
      '{"message":"Resource not accessible"}',
    );
    expect(classify(error)).toEqual({
      errorClass: 'permanent',
      reason: 'permission denied: HTTP 403 (forbidden) from https://api.github.com/repos/octo/hello/issues',
    });
  });

  it('waits a minute on a secondary rate limit without headers', () => {
    const body = '{"message":"You have exceeded a secondary rate limit. Please wait a few minutes."}';
    expect(classify(githubError(403, { 'x-ratelimit-remaining': '4000' }, body))).toMatchObject({
      errorClass: 'transient',
      waitMs: 60_000,
    });
  });

  it.each([403, 429])('waits as long as retry-after says on HTTP %i', (status) => {
    const error = githubError(status, { 'retry-after': '30', 'x-ratelimit-remaining': '10' });
    expect(classify(error)).toMatchObject({ errorClass: 'transient', waitMs: 30_000 });
  });

  it('prefers retry-after over the secondary-limit minute', () => {
    const error = githubError(403, { 'retry-after': '5' }, 'secondary rate limit');
    expect(classify(error)).toMatchObject({ waitMs: 5_000 });
  });

  it('retries a plain 429 with the backoff', () => {
    expect(classify(githubError(429, {}))).toEqual({
      errorClass: 'transient',
      reason: 'HTTP 429 (rate limited) from https://api.github.com/repos/octo/hello/issues',
    });
  });

  it.each([
    [404, 'permanent'],
    [401, 'permanent'],
    [422, 'permanent'],
    [500, 'transient'],
    [502, 'transient'],
  ])('falls back to the default classification for HTTP %i (%s)', (status, errorClass) => {
    expect(classify(githubError(status, {})).errorClass).toBe(errorClass);
  });

  it('falls back to the default classification for network errors', () => {
    const error = new TypeError('fetch failed', {
      cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
    });
    expect(classify(error).errorClass).toBe('transient');
  });
});
