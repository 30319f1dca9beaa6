import { secretBindingProblem, secretReferences } from '../connectors/secret-binding.js';
import {
  type HostLookup,
  type SourcePolicy,
  STRICT_SOURCE_POLICY,
  systemLookup,
  urlProblems,
} from '../connectors/url-policy.js';
import type { FieldError } from './errors.js';

/** The stack's source posture and the resolver its URL checks use. */
export interface SourceGuard {
  readonly policy: SourcePolicy;
  readonly lookup: HostLookup;
}

/**
 * How long a host lookup may take while a source is written. A slower resolver counts as "does
 * not resolve yet" (accepted: the worker checks every connection), so a PUT never hangs on DNS.
 */
export const LOOKUP_TIMEOUT_MS = 3_000;

/** `lookup` that gives up after {@link LOOKUP_TIMEOUT_MS}. */
export function boundedLookup(lookup: HostLookup, timeoutMs = LOOKUP_TIMEOUT_MS): HostLookup {
  return (hostname) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`lookup of ${hostname} timed out`)), timeoutMs);
    });
    return Promise.race([lookup(hostname), timeout]).finally(() => clearTimeout(timer));
  };
}

/** On AWS without settings: public hosts only, no shared secrets. */
export const STRICT_SOURCE_GUARD: SourceGuard = {
  policy: STRICT_SOURCE_POLICY,
  lookup: boundedLookup(systemLookup),
};

/** Every string field of `config` that is an http(s) URL, by dot path. */
export function urlFields(config: unknown, path: string[] = []): { path: string; url: string }[] {
  if (Array.isArray(config)) return config.flatMap((item, i) => urlFields(item, [...path, String(i)]));
  if (!config || typeof config !== 'object') return [];
  return Object.entries(config as Record<string, unknown>).flatMap(([key, value]) => {
    if (typeof value === 'string' && /^https?:\/\//i.test(value)) {
      // URL templates (`itemUrl`) hold `{id}`; any id gives the same host.
      return [{ path: [...path, key].join('.'), url: value.replaceAll('{id}', '0') }];
    }
    return urlFields(value, [...path, key]);
  });
}

/**
 * What the stack's posture refuses in a source config (empty when nothing): secret references
 * outside the source's own prefix and the shared list; URLs on another host than the allow-list
 * permits, on link-local, metadata, loopback or private addresses, or over http:// with a secret.
 */
export async function sourcePolicyProblems(
  sourceId: string,
  config: Record<string, unknown>,
  guard: SourceGuard,
): Promise<FieldError[]> {
  const references = secretReferences(config);
  const problems: FieldError[] = references.flatMap(({ path, reference }) => {
    const problem = secretBindingProblem(reference, sourceId, guard.policy.sharedSecrets);
    return problem ? [{ path, message: problem }] : [];
  });
  for (const { path, url } of urlFields(config)) {
    const found = await urlProblems(url, {
      policy: guard.policy,
      lookup: guard.lookup,
      credentialed: references.length > 0,
      unresolved: 'accept',
    });
    problems.push(...found.map(({ message }) => ({ path, message })));
  }
  return problems;
}
