import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, fetch as undiciFetch } from 'undici';
import { ClassifiedError } from '../retry/errors.js';
import { addressKind, addressRefusal, type SourcePolicy, urlProblems } from './url-policy.js';

/**
 * The worker's HTTP client: `fetch` that refuses any request breaking the source policy, at two
 * points. Before the request: scheme, host allow-list and IP-literal hosts. At the connection:
 * every address the host resolves to, checked in the resolver the socket itself uses, so a DNS
 * answer that changes between a check and the connection (rebinding) cannot slip through. Each
 * redirect hop passes through it too, since connectors follow redirects by hand: a redirect is
 * answered as is (`redirect: 'manual'`) unless the caller asks for `follow` in so many words,
 * because `fetch` would follow it without the pre-check and with every header the caller set.
 *
 * A refusal is a permanent error (`ClassifiedError`): retrying will not move the host.
 */

/** Raised inside the connection's lookup; turned into a permanent `ClassifiedError` by the fetch. */
class SourceAddressRefused extends Error {
  override readonly name = 'SourceAddressRefused';
}

/** `dns.lookup`'s shape, injected by tests to play a resolver that answers differently each time. */
export type ConnectLookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemConnectLookup: ConnectLookup = (hostname, options, callback) =>
  dnsLookup(hostname, options, callback);

/** A `net.connect` lookup that refuses any address the policy refuses. */
function checkingLookup(policy: SourcePolicy, resolve: ConnectLookup) {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const refusal = addressRefusal(addressKind(address), policy);
        if (refusal)
          return callback(new SourceAddressRefused(`host ${hostname} (${address}) ${refusal}`), []);
      }
      const [first] = addresses;
      if (options.all) return callback(null, addresses);
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}

function refusedCause(error: unknown): SourceAddressRefused | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof SourceAddressRefused) return current;
    current = current.cause;
  }
  return undefined;
}

/** Options of {@link guardedFetch}. */
export interface GuardedFetchOptions {
  /** The resolver the connection uses (default `dns.lookup`). */
  readonly connectLookup?: ConnectLookup;
}

/** A `fetch` that keeps to `policy` (see the module documentation). */
export function guardedFetch(policy: SourcePolicy, options: GuardedFetchOptions = {}): typeof fetch {
  const dispatcher = new Agent({
    connect: { lookup: checkingLookup(policy, options.connectLookup ?? systemConnectLookup) },
  });
  // Names are resolved by the connection (above); the pre-check sees only what the URL itself says.
  const namesUnresolved = async (): Promise<string[]> => [];
  const guarded = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const problems = await urlProblems(url, {
      policy,
      lookup: namesUnresolved,
      credentialed: false,
      unresolved: 'accept',
    });
    if (problems.length > 0) {
      throw new ClassifiedError(
        'permanent',
        `source address refused: ${problems.map((p) => p.message).join('; ')}`,
      );
    }
    try {
      const redirect = init?.redirect ?? 'manual';
      return (await undiciFetch(url, { ...(init as object), redirect, dispatcher })) as unknown as Response;
    } catch (error) {
      const refused = refusedCause(error);
      if (refused)
        throw new ClassifiedError('permanent', `source address refused: ${refused.message}`, {
          cause: error,
        });
      throw error;
    }
  };
  return guarded as typeof fetch;
}
