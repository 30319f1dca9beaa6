import { describe, expect, it } from 'vitest';
import { consoleRefusal, ownHost } from '../../lib/console/guard.js';
import { targetOf } from '../../lib/console/proxy.js';

const PORT = 8788;
const OWN = `http://127.0.0.1:${PORT}`;

describe('consoleRefusal', () => {
  it.each([
    ['GET', {}],
    ['GET', { 'sec-fetch-site': 'none' }],
    ['GET', { 'sec-fetch-site': 'same-origin' }],
    ['POST', { 'sec-fetch-site': 'same-origin', origin: OWN }],
    ['POST', { origin: `http://localhost:${PORT}` }],
  ])('answers a %s with %j', (method, headers) => {
    expect(consoleRefusal(method, headers, PORT)).toBeUndefined();
  });

  it.each([
    ['GET', { 'sec-fetch-site': 'cross-site' }, /cross-site request/],
    ['GET', { 'sec-fetch-site': 'same-site' }, /same-site request/],
    ['GET', { origin: 'http://evil.example' }, /evil\.example/],
    ['POST', { origin: 'http://127.0.0.1:1' }, /127\.0\.0\.1:1/],
    ['POST', {}, /must come from the console's own page/],
    ['DELETE', { 'sec-fetch-site': 'none' }, /must come from the console's own page/],
  ])('refuses a %s with %j', (method, headers, why) => {
    expect(consoleRefusal(method, headers, PORT)).toMatch(why);
  });

  it('knows its own Host in each spelling and no other', () => {
    expect([`127.0.0.1:${PORT}`, `localhost:${PORT}`, `[::1]:${PORT}`].every((h) => ownHost(h, PORT))).toBe(
      true,
    );
    expect(ownHost('evil.example', PORT) || ownHost('127.0.0.1:1', PORT) || ownHost(undefined, PORT)).toBe(
      false,
    );
  });
});

describe('targetOf', () => {
  const endpoint = new URL('https://abc.execute-api.eu-west-1.amazonaws.com/prod/');

  it('forwards /api/<rest> under the endpoint base path, query kept', () => {
    expect(targetOf(endpoint, '/api/sources/a/runs?limit=5')?.href).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com/prod/sources/a/runs?limit=5',
    );
  });

  it.each(['/api/../other', '/api/sources/%2e%2e/x', '/api/./sources', '/api/%E0%A4%A'])(
    'refuses %s, which could step out of the base path',
    (url) => {
      expect(targetOf(endpoint, url)).toBeUndefined();
    },
  );
});
