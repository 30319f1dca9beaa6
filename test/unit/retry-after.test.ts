import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRateLimitReset, parseRetryAfter, waitFromHeaders } from '../../lib/retry/retry-after.js';

const NOW = Date.parse('2015-10-21T07:28:00Z');

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 5 ', 5_000],
    ['1.5', 1_500],
    ['-5', 0],
  ])('reads delta seconds %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([
    ['Wed, 21 Oct 2015 07:29:00 GMT', 60_000],
    ['Wednesday, 21-Oct-15 07:29:30 GMT', 90_000],
    ['Wed Oct 21 07:28:10 2015', 10_000],
  ])('reads the HTTP-date %j relative to now', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it('answers 0 for an HTTP-date in the past', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:00:00 GMT', NOW)).toBe(0);
  });

  it.each([
    ['soon'],
    [''],
    ['foo 1'],
    ['1e3'],
    ['12abc'],
    ['Wed, 99 Foo 2015 07:00:00 GMT'],
    ['1'.repeat(400)],
  ])('answers undefined for garbage %j', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('answers undefined when the header is absent', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  it('never returns NaN or a negative wait, whatever the header says', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 4_102_444_800_000 }), (value, now) => {
        const wait = parseRetryAfter(value, now);
        if (wait !== undefined) {
          expect(Number.isFinite(wait)).toBe(true);
          expect(wait).toBeGreaterThanOrEqual(0);
        }
      }),
    );
  });
});

describe('parseRateLimitReset', () => {
  const resetIn90s = String(NOW / 1_000 + 90);

  it('waits until X-RateLimit-Reset when X-RateLimit-Remaining is 0', () => {
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': resetIn90s };
    expect(parseRateLimitReset(headers, NOW)).toBe(90_000);
  });

  it.each([
    ['GitHub', { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1_000 + 90) }],
    [
      'Okta',
      {
        'x-rate-limit-limit': '600',
        'x-rate-limit-remaining': '0',
        'x-rate-limit-reset': String(NOW / 1_000 + 90),
      },
    ],
    ['X (reset only)', { 'x-rate-limit-reset': String(NOW / 1_000 + 90) }],
    ['the IETF draft (delta seconds)', { 'ratelimit-remaining': '0', 'ratelimit-reset': '90' }],
    ['GitLab (epoch seconds)', { 'ratelimit-remaining': '0', 'ratelimit-reset': String(NOW / 1_000 + 90) }],
  ])('reads the reset of the %s header family', (_family, headers) => {
    expect(parseRateLimitReset(headers, NOW)).toBe(90_000);
  });

  it.each([
    ['Retry-After seconds', { 'retry-after': '90' }],
    ['Retry-After date', { 'retry-after': 'Wed, 21 Oct 2015 07:29:30 GMT' }],
    ['X-Rate-Limit-Reset', { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(NOW / 1_000 + 90) }],
  ])('waitFromHeaders waits for %s', (_family, headers) => {
    expect(waitFromHeaders(headers, NOW)).toBe(90_000);
  });

  it('ignores the reset while requests remain in the window', () => {
    const headers = { 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': resetIn90s };
    expect(parseRateLimitReset(headers, NOW)).toBeUndefined();
  });

  it('answers 0 for a reset already past', () => {
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1_000 - 10) };
    expect(parseRateLimitReset(headers, NOW)).toBe(0);
  });

  it('reads RateLimit-Reset as delta seconds', () => {
    expect(parseRateLimitReset({ 'ratelimit-remaining': '0', 'ratelimit-reset': '30' }, NOW)).toBe(30_000);
  });

  it('reads a RateLimit-Reset that can only be an epoch time as one (GitLab)', () => {
    expect(parseRateLimitReset({ 'ratelimit-reset': resetIn90s }, NOW)).toBe(90_000);
  });

  it('answers undefined for a garbage reset', () => {
    expect(
      parseRateLimitReset({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': 'later' }, NOW),
    ).toBeUndefined();
  });
});

describe('waitFromHeaders', () => {
  it('prefers Retry-After over a rate-limit reset', () => {
    const headers = {
      'retry-after': '7',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(NOW / 1_000 + 900),
    };
    expect(waitFromHeaders(headers, NOW)).toBe(7_000);
  });

  it('falls back to the rate-limit reset when Retry-After is garbage', () => {
    const headers = {
      'retry-after': 'soon',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(NOW / 1_000 + 9),
    };
    expect(waitFromHeaders(headers, NOW)).toBe(9_000);
  });

  it('answers undefined when nothing asks for a wait', () => {
    expect(waitFromHeaders({ 'content-type': 'application/json' }, NOW)).toBeUndefined();
  });
});
