import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatLinkHeader, parseLinkHeader } from '../../lib/connectors/link-header.js';

const GITHUB =
  '<https://api.github.com/repositories/1300192/issues?page=2>; rel="next", ' +
  '<https://api.github.com/repositories/1300192/issues?page=515>; rel="last"';

describe('parseLinkHeader', () => {
  it('reads GitHub’s next and last links', () => {
    expect(parseLinkHeader(GITHUB)).toEqual({
      next: 'https://api.github.com/repositories/1300192/issues?page=2',
      last: 'https://api.github.com/repositories/1300192/issues?page=515',
    });
  });

  it('keeps commas that are part of a URL', () => {
    const header =
      '<https://x.test/issues?labels=bug,ui&page=2>; rel="next", <https://x.test/issues?page=1>; rel="first"';
    expect(parseLinkHeader(header)).toEqual({
      next: 'https://x.test/issues?labels=bug,ui&page=2',
      first: 'https://x.test/issues?page=1',
    });
  });

  it('gives every relation of a link with several rels the same URL', () => {
    expect(parseLinkHeader('<https://x.test/?p=9>; rel="last  next"')).toEqual({
      last: 'https://x.test/?p=9',
      next: 'https://x.test/?p=9',
    });
  });

  it('accepts unquoted rels, extra parameters, odd spacing and rel case', () => {
    const header = '<https://x.test/?p=2> ;title="a, b; c"; REL=Next,<https://x.test/?p=1>;rel=prev';
    expect(parseLinkHeader(header)).toEqual({ next: 'https://x.test/?p=2', prev: 'https://x.test/?p=1' });
  });

  it('keeps the first link when a relation repeats', () => {
    expect(parseLinkHeader('<https://x.test/a>; rel=next, <https://x.test/b>; rel=next')).toEqual({
      next: 'https://x.test/a',
    });
  });

  it('resolves relative targets against a base URL', () => {
    expect(parseLinkHeader('</items?page=3>; rel="next"', 'https://x.test/v1/items?page=2')).toEqual({
      next: 'https://x.test/items?page=3',
    });
  });

  it.each([
    [undefined],
    [null],
    [''],
    ['garbage'],
    ['<https://x.test/>'],
    ['<https://x.test/>; title="no rel"'],
  ])('finds no relations in %j', (header) => {
    expect(parseLinkHeader(header)).toEqual({});
  });

  it('skips a malformed part and still reads the rest', () => {
    expect(parseLinkHeader('nonsense; rel=first, <https://x.test/?p=2>; rel="next"')).toEqual({
      next: 'https://x.test/?p=2',
    });
  });

  it('does not let a relation named like a prototype property leak or collide', () => {
    const links = parseLinkHeader(
      '<https://x.test/a>; rel="constructor", <https://x.test/b>; rel="__proto__"',
    );
    expect(links.constructor).toBe('https://x.test/a');
    expect(Object.getPrototypeOf(links)).toBe(Object.prototype);
  });

  it('round-trips whatever formatLinkHeader writes', () => {
    const rel = fc.stringMatching(/^[a-z][a-z0-9.-]{0,10}$/);
    const url = fc.webUrl({ withQueryParameters: true });
    fc.assert(
      fc.property(fc.dictionary(rel, url, { maxKeys: 5 }), (links) => {
        const expected = Object.fromEntries(Object.entries(links).map(([r, u]) => [r, new URL(u).href]));
        expect(parseLinkHeader(formatLinkHeader(links))).toEqual(expected);
      }),
    );
  });

  it('never throws, whatever the header holds', () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        expect(() => parseLinkHeader(header, 'https://x.test/')).not.toThrow();
      }),
    );
  });
});
