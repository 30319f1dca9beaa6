import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePosition } from '../../lib/connectors/keyset.js';
import { REDACTED, redactCursor, redactUrl, redactUrlsIn } from '../../lib/connectors/redact-url.js';
import { deadLetterEntryId } from '../../lib/store/dead-letters.js';

describe('redactUrl', () => {
  it.each([
    [
      'https://gitlab.example/api/v4/projects/1/issues?page=2&private_token=glpat-abc',
      'https://gitlab.example/api/v4/projects/1/issues?page=2&private_token=<redacted>',
    ],
    [
      'https://api.example.com/items?since=2024-05-01T00%3A00%3A00Z&access_token=s3cr3t&per_page=100',
      'https://api.example.com/items?since=2024-05-01T00%3A00%3A00Z&access_token=<redacted>&per_page=100',
    ],
    [
      'https://api.example.com/x?api_key=1&apikey=2&key=3',
      'https://api.example.com/x?api_key=<redacted>&apikey=<redacted>&key=<redacted>',
    ],
    [
      'https://bucket.s3.amazonaws.com/o?X-Amz-Credential=AKIA&X-Amz-Signature=ff&X-Amz-Security-Token=t&X-Amz-Expires=60',
      'https://bucket.s3.amazonaws.com/o?X-Amz-Credential=<redacted>&X-Amz-Signature=<redacted>&X-Amz-Security-Token=<redacted>&X-Amz-Expires=60',
    ],
    ['https://api.example.com/x?q=ghp_abcdefghijklmnop', 'https://api.example.com/x?q=<redacted>'],
    ['https://user:pass@api.example.com/x#frag', `https://${encodeURIComponent(REDACTED)}@api.example.com/x`],
    [
      'https://api.github.com/repos/o/r/issues?state=all&page=3',
      'https://api.github.com/repos/o/r/issues?state=all&page=3',
    ],
  ])('redacts %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('keeps only the part before the query of text that is not a URL', () => {
    expect(redactUrl('/relative/path?token=abc')).toBe('/relative/path');
  });

  it('never returns a value given as a token-named parameter', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{8,40}$/), (secret) => {
        const out = redactUrl(`https://h.example/p?page=1&token=${secret}&client_secret=${secret}`);
        expect(out).not.toContain(secret);
        expect(out).toContain('page=1');
      }),
    );
  });
});

describe('redactCursor', () => {
  it.each([
    [
      'https://api.example.com/items?page=2&access_token=abc',
      'https://api.example.com/items?page=2&access_token=<redacted>',
    ],
    ['/items?page=2&sig=abc', '/items?page=2&sig=<redacted>'],
    ['page=2&X-Amz-Signature=ff', 'page=2&X-Amz-Signature=<redacted>'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln', REDACTED],
    ['17', '17'],
    ['c2VlbjoxMjM0NTY=', 'c2VlbjoxMjM0NTY='],
  ])('shows %s as %s', (cursor, shown) => {
    expect(redactCursor(cursor)).toBe(shown);
  });

  it('redacts a source URL wrapped in a connector envelope, and leaves a clean envelope as it is', () => {
    const signed = encodePosition({
      at: '2024-01-01T00:00:00Z',
      ids: ['a'],
      follow: 'https://h.example/p?page=3&access_token=abc',
    });
    const clean = encodePosition({
      at: '2024-01-01T00:00:00Z',
      ids: ['a'],
      follow: 'https://h.example/p?page=3',
    });

    const shown = redactCursor(signed);

    expect(shown.startsWith('ks1.')).toBe(true);
    expect(Buffer.from(shown.slice(4), 'base64url').toString()).toContain('access_token=<redacted>');
    expect(Buffer.from(shown.slice(4), 'base64url').toString()).not.toContain('abc');
    expect(redactCursor(clean)).toBe(clean);
  });

  it('redacts inside a connector-wrapped cursor quoted in free text (a drained message body)', () => {
    const wrapped = encodePosition({
      at: '2024-01-01T00:00:00Z',
      ids: ['a'],
      follow: 'https://h.example/p?sig=s3cr3t',
    });
    const shown = redactUrlsIn(JSON.stringify({ runId: 'r', cursor: wrapped }));
    const inner = /ks1\.([\w-]+)/.exec(shown)?.[1] ?? '';
    expect(Buffer.from(inner, 'base64url').toString()).toContain('sig=<redacted>');
    expect(Buffer.from(inner, 'base64url').toString()).not.toContain('s3cr3t');
  });

  it('redacts the URLs in free text and keeps the rest', () => {
    expect(redactUrlsIn('{"cursor":"https://h.example/p?key=k1&page=2","page":2}')).toBe(
      '{"cursor":"https://h.example/p?key=<redacted>&page=2","page":2}',
    );
  });
});

describe('deadLetterEntryId', () => {
  it('keys a short page ref by itself, but hashes one that carries a credential', () => {
    expect(deadLetterEntryId('page', 'https://h.example/p?page=2')).toBe('page#https://h.example/p?page=2');
    expect(deadLetterEntryId('page', 'https://h.example/p?page=2&access_token=abc')).toMatch(
      /^page#sha256:[0-9a-f]{64}$/,
    );
  });
});
