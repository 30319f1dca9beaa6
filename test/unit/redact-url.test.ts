import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactUrl } from '../../lib/connectors/redact-url.js';

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
