import { CLI_COMMANDS, shellWord } from '../config/cli-commands.js';
import { isLoopbackHost } from '../config/origins.js';
import { ClassifiedError } from '../retry/errors.js';
import type { SecretResolver } from './contract.js';

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

function headerValues(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): string[] {
  const values: string[] = [];
  const collect = (headers: Headers) => {
    headers.forEach((value) => {
      values.push(value);
    });
  };
  if (input instanceof Request) collect(input.headers);
  collect(new Headers(init?.headers));
  return values;
}

/** True when a request shows `secret` in a header value or in its URL (raw or percent-encoded). */
function carries(secret: string, url: URL, headers: readonly string[]): boolean {
  if (secret.length === 0) return false;
  if (headers.some((value) => value.includes(secret))) return true;
  return url.href.includes(secret) || url.href.includes(encodeURIComponent(secret));
}

/**
 * A resolver and a fetch bound to each other and to `origins` (see the module documentation):
 * `secrets` refuses an unbound reference before any secret store is asked; `fetch` refuses, as a
 * permanent classified error, any request that carries a value `secrets` returned unless
 * its origin is bound to that reference and it goes over https.
 */
export function originBoundSecrets(
  resolver: SecretResolver,
  fetchFn: typeof fetch,
  origins: SecretOrigins,
  options: { readonly allowLoopback: boolean; readonly sourceId?: string },
): BoundSecrets {
  const bound = new Map<string, readonly string[] | undefined>();
  const resolved = new Map<string, string>();
  const secrets = async (reference: string): Promise<string> => {
    const allowed = await origins.originsFor(reference);
    bound.set(reference, allowed);
    if (!allowed || allowed.length === 0) throw refused(unboundMessage(reference, options.sourceId));
    const value = await resolver(reference);
    resolved.set(reference, value);
    return value;
  };
  const guarded = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = requestUrl(input);
    const headers = headerValues(input, init);
    for (const [reference, value] of resolved) {
      if (!carries(value, url, headers)) continue;
      const refusal = secretRequestRefusal(url, reference, bound.get(reference), options.allowLoopback);
      if (refusal) throw refused(refusal);
    }
    return fetchFn(input, init);
  };
  const invalidate = resolver.invalidate;
  return {
    secrets: Object.assign(secrets, invalidate ? { invalidate: (r: string) => invalidate(r) } : {}),
    fetch: guarded as typeof fetch,
    scrub: (value) => scrubValues(value, [...resolved.values()]),
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

/** Stands for a secret in anything shown or stored. */
export const REDACTED_SECRET = '<redacted>';

function scrubValues<T>(value: T, secrets: readonly string[]): T {
  const present = secrets.filter((secret) => secret.length > 0);
  if (present.length === 0) return value;
  const scrubText = (text: string) =>
    present.reduce((out, secret) => out.split(secret).join(REDACTED_SECRET), text);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [scrubText(k), walk(inner)]));
    return v;
  };
  return walk(value) as T;
}
