/**
 * RFC 8288 `Link` header parsing, for sources that paginate the way GitHub does:
 * `<https://api.github.com/…?page=2>; rel="next", <https://api.github.com/…?page=9>; rel="last"`.
 *
 * A hand-written scanner rather than `split(',')`: URLs may contain commas, parameter values may be
 * quoted (and then contain commas and semicolons), and one link may carry several relations.
 */

/** Relation (lower-cased) → target URL. */
export type LinkRelations = Record<string, string>;

interface Scanner {
  readonly text: string;
  pos: number;
}

function skip(s: Scanner, chars: string): void {
  while (s.pos < s.text.length && chars.includes(s.text[s.pos] as string)) s.pos++;
}

/** Reads up to (not including) the first of `stops`, or the end. */
function readUntil(s: Scanner, stops: string): string {
  const start = s.pos;
  while (s.pos < s.text.length && !stops.includes(s.text[s.pos] as string)) s.pos++;
  return s.text.slice(start, s.pos);
}

function readQuoted(s: Scanner): string {
  s.pos++; // opening quote
  let value = '';
  while (s.pos < s.text.length && s.text[s.pos] !== '"') {
    if (s.text[s.pos] === '\\') s.pos++; // quoted-pair: the next character is literal
    value += s.text[s.pos] ?? '';
    s.pos++;
  }
  s.pos++; // closing quote
  return value;
}

/** Reads `; name=value` parameters up to the comma that ends the link. */
function readParams(s: Scanner): Map<string, string> {
  const params = new Map<string, string>();
  for (;;) {
    skip(s, ' \t');
    if (s.text[s.pos] !== ';') break;
    s.pos++;
    skip(s, ' \t');
    const name = readUntil(s, '=;,').trim().toLowerCase();
    let value = '';
    if (s.text[s.pos] === '=') {
      s.pos++;
      skip(s, ' \t');
      value = s.text[s.pos] === '"' ? readQuoted(s) : readUntil(s, ';,').trim();
    }
    // RFC 8288 §3: occurrences after the first of a parameter are ignored.
    if (name && !params.has(name)) params.set(name, value);
  }
  return params;
}

function resolve(target: string, base: string | undefined): string | undefined {
  try {
    return base === undefined ? new URL(target).href : new URL(target, base).href;
  } catch {
    return base === undefined && target !== '' ? target : undefined;
  }
}

/**
 * Parses a `Link` header into relation → URL. Relation names are lower-cased (they are
 * case-insensitive); the first link for a relation wins; malformed parts are skipped, never thrown.
 *
 * @param base - resolves relative targets (the request URL); without it targets are returned as
 *   written (absolute ones normalised by `URL`).
 * @example
 * parseLinkHeader('<https://x/?page=2>; rel="next", <https://x/?page=5>; rel=last');
 * // { next: 'https://x/?page=2', last: 'https://x/?page=5' }
 */
export function parseLinkHeader(value: string | null | undefined, base?: string): LinkRelations {
  // A Map, then own properties: a relation named `constructor` or `__proto__` must not collide
  // with Object.prototype.
  const links = new Map<string, string>();
  if (!value) return {};
  const s: Scanner = { text: value, pos: 0 };
  while (s.pos < s.text.length) {
    skip(s, ' \t,');
    if (s.text[s.pos] !== '<') {
      readUntil(s, ','); // not a link: skip to the next one
      continue;
    }
    s.pos++;
    const target = readUntil(s, '>').trim();
    s.pos++;
    const url = resolve(target, base);
    const rels = readParams(s).get('rel')?.split(/\s+/) ?? [];
    for (const rel of rels) {
      const key = rel.toLowerCase();
      if (key && url !== undefined && !links.has(key)) links.set(key, url);
    }
    readUntil(s, ','); // anything after the parameters up to the next link
  }
  return Object.fromEntries(links);
}

/**
 * The inverse of {@link parseLinkHeader}, for fake sources in tests and local development.
 *
 * @example
 * formatLinkHeader({ next: 'https://x/?page=2' }); // '<https://x/?page=2>; rel="next"'
 */
export function formatLinkHeader(links: LinkRelations): string {
  return Object.entries(links)
    .map(([rel, url]) => `<${url}>; rel="${rel}"`)
    .join(', ');
}
