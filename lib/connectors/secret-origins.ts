import { CLI_COMMANDS, shellWord } from '../config/cli-commands.js';
import { isLoopbackHost } from '../config/origins.js';
import { ClassifiedError } from '../retry/errors.js';
import type { SecretCarrier, SecretResolver } from './contract.js';
import { createSecretScrubber, type SecretScrubber, secretSpellings, wireSecret } from './secret-scrub.js';

export { REDACTED_SECRET } from './secret-scrub.js';

/**
 * A secret goes only where its owner sent it. Each secret reference is bound to the origins
 * (`https://api.github.com`: scheme, host, port) it may be sent to — a source's own secrets by a
 * binding record only the admin route `PUT /secret-bindings/{sourceId}` (`harvester secrets bind`) writes, a shared secret by
 * the stack setting `sharedSecretRefs`. Editing a source cannot move a secret: the origins come
 * from the binding, never from the source's config.
 *
 * {@link originBoundSecrets} enforces it per request: a secret is resolved only when its reference
 * is bound, and every request that carries a resolved value (in any header, or in the URL) is sent
 * only to a bound origin, over https (http only to a loopback host in a local stack). That covers
 * redirects, next-page URLs the source supplied, fetches by id, planning requests and connection
 * checks alike, since it looks at the request itself rather than at where it came from.
 */

/** Where a secret reference may be sent; undefined: the reference is bound to nothing. */
export interface SecretOrigins {
  originsFor(reference: string): Promise<readonly string[] | undefined>;
}

/**
 * Why a request to `url` may not carry the secret behind `reference`, or undefined when it may.
 * The message names the origin and the reference (never the value).
 */
export function secretRequestRefusal(
  url: URL,
  reference: string,
  origins: readonly string[] | undefined,
  allowLoopback: boolean,
): string | undefined {
  if (!origins || origins.length === 0) return unboundMessage(reference, undefined);
  if (!origins.includes(url.origin))
    return `secret ${reference} may not be sent to ${url.origin} (it is bound to ${origins.join(', ')})`;
  if (url.protocol !== 'https:' && !(allowLoopback && isLoopbackHost(url.hostname)))
    return `secret ${reference} is sent only over https, not to ${url.origin}`;
  return undefined;
}

/** The refusal of an unbound secret, with the command that shows what the source's bindings are. */
function unboundMessage(reference: string, sourceId: string | undefined): string {
  const unbound = `secret ${reference} is bound to no origin`;
  if (sourceId === undefined) return `${unbound}; an administrator binds it with harvester secrets bind`;
  // `secrets bind` replaces the whole set: the administrator starts from what `show` lists.
  return `${unbound}; ${CLI_COMMANDS.secretsShow(sourceId)} lists the source's bindings, and an administrator adds it with harvester secrets bind ${shellWord(sourceId)} --secret ${shellWord(reference)}=ORIGIN (keeping the others)`;
}

/** A refused secret: permanent (retrying will not move the origin), the origin named. */
function refused(message: string): ClassifiedError {
  return new ClassifiedError('permanent', `request refused: ${message}`);
}

function requestUrl(input: Parameters<typeof fetch>[0]): URL {
  return new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
}

/** Every header of a request as `[lower-case name, value]`. */
function requestHeaders(
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
): [string, string][] {
  const pairs: [string, string][] = [];
  const collect = (headers: Headers) => {
    headers.forEach((value, name) => {
      pairs.push([name, value]);
    });
  };
  if (input instanceof Request) collect(input.headers);
  collect(new Headers(init?.headers));
  return pairs;
}

/** References whose declared carrier header the request sends (a non-empty value). */
function declaredIn(carriers: readonly SecretCarrier[], headers: readonly [string, string][]): Set<string> {
  const sent = new Set(headers.filter(([, value]) => value.length > 0).map(([name]) => name));
  return new Set(carriers.filter((c) => sent.has(c.header.toLowerCase())).map((c) => c.reference));
}

/** A header value's words that decode as base64 (a `Basic` credential is `user:secret` encoded). */
function decodedWords(header: string): string[] {
  return header
    .split(/\s+/)
    .filter((word) => word.length >= 8 && /^[A-Za-z0-9+/_-]+=*$/.test(word))
    .map((word) => Buffer.from(word, 'base64').toString('utf8'));
}

/** Notes each base64 word of `header` that decodes to text holding a spelling of the value. */
function noteEncodedWords(scrubber: SecretScrubber, header: string, spellings: readonly string[]): void {
  for (const word of header.split(/\s+/)) {
    if (word.length < 8 || !/^[A-Za-z0-9+/_-]+=*$/.test(word)) continue;
    const decoded = Buffer.from(word, 'base64').toString('utf8');
    if (spellings.some((s) => decoded.includes(s))) scrubber.noteSent(word);
  }
}

function decodedUrl(url: URL): string {
  try {
    return decodeURIComponent(url.href.replace(/\+/g, ' '));
  } catch {
    return url.href;
  }
}

/**
 * Whether a request shows `secret` anywhere it goes on the wire: a header value (or a base64 word
 * of one), the URL in any spelling (raw, percent- or form-encoded, decoded). `Headers` trims what
 * it sends, and the values compared are the trimmed ones {@link wireSecret} hands out.
 */
function carries(spellings: readonly string[], url: URL, headers: readonly string[]): string[] {
  const texts = [url.href, decodedUrl(url), ...url.searchParams.values()];
  if (texts.some((text) => spellings.some((s) => text.includes(s)))) return [url.href];
  return headers.filter((value) =>
    [value, ...decodedWords(value)].some((text) => spellings.some((s) => text.includes(s))),
  );
}

/** What {@link originBoundSecrets} takes besides the resolver, the fetch and the origins. */
export interface BoundSecretsOptions {
  readonly allowLoopback: boolean;
  /** The source the secrets belong to: a refusal names the `harvester secrets bind` command for it. */
  readonly sourceId?: string;
  /**
   * Collects every value resolved (and every header that carried one), for whoever stores or
   * shows what the fetch returned; default a fresh one, reachable as `scrub`.
   */
  readonly scrubber?: SecretScrubber;
  /**
   * The headers the connector declares it sends each reference in: a request sending one is held
   * to that reference's binding whatever its value (see `Connector.secretCarriers`).
   */
  readonly carriers?: readonly SecretCarrier[];
}

/**
 * A resolver and a fetch bound to each other and to `origins` (see the module documentation):
 * `secrets` refuses an unbound reference before any secret store is asked, and hands out the value
 * trimmed as {@link wireSecret} does; `fetch` refuses, as a permanent classified error, any request
 * that carries a value `secrets` returned unless its origin is bound to that reference and it goes
 * over https.
 */
export function originBoundSecrets(
  resolver: SecretResolver,
  fetchFn: typeof fetch,
  origins: SecretOrigins,
  options: BoundSecretsOptions,
): BoundSecrets {
  const scrubber = options.scrubber ?? createSecretScrubber();
  const bound = new Map<string, readonly string[] | undefined>();
  const resolved = new Map<string, readonly string[]>();
  const secrets = async (reference: string): Promise<string> => {
    const allowed = await origins.originsFor(reference);
    bound.set(reference, allowed);
    if (!allowed || allowed.length === 0) throw refused(unboundMessage(reference, options.sourceId));
    const stored = await resolver(reference);
    // Noted before it is judged: a refused value is scrubbed from the refusal's surroundings too.
    scrubber.note(stored);
    const value = wireSecret(reference, stored);
    scrubber.note(value);
    resolved.set(reference, secretSpellings(value));
    return value;
  };
  const guarded = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = requestUrl(input);
    const pairs = requestHeaders(input, init);
    const headers = pairs.map(([, value]) => value);
    const declared = declaredIn(options.carriers ?? [], pairs);
    for (const [reference, spellings] of resolved) {
      const carriers = carries(spellings, url, headers);
      if (carriers.length === 0 && !declared.has(reference)) continue;
      const refusal = secretRequestRefusal(url, reference, bound.get(reference), options.allowLoopback);
      if (refusal) throw refused(refusal);
      // What went on the wire is scrubbed as sent: a `Basic` credential (base64 of `user:secret`)
      // holds no spelling of the value, so the encoded word itself is noted.
      for (const header of carriers) noteEncodedWords(scrubber, header, spellings);
    }
    return fetchFn(input, init);
  };
  const invalidate = resolver.invalidate;
  return {
    secrets: Object.assign(secrets, invalidate ? { invalidate: (r: string) => invalidate(r) } : {}),
    fetch: guarded as typeof fetch,
    scrub: (value) => scrubber.scrub(value),
  };
}

/** What {@link originBoundSecrets} returns. */
export interface BoundSecrets {
  readonly secrets: SecretResolver;
  readonly fetch: typeof fetch;
  /**
   * `value` (any JSON value) with every secret resolved so far replaced by `<redacted>`: for
   * whatever leaves a check or a run as an answer, since a hostile source can echo the request's
   * headers back in a record or an error body.
   */
  scrub<T>(value: T): T;
}
