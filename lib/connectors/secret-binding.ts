import { ClassifiedError } from '../retry/errors.js';
import type { SecretResolver } from './contract.js';

/**
 * Secrets are bound to sources: a source may only use secrets under its own name
 * prefix, `harvester/<sourceId>/…` (SSM `/harvester/<sourceId>/…` or Secrets Manager
 * `harvester/<sourceId>/…`), or one of the stack's shared secrets. Without the binding, anyone who
 * may write a source could point it at a host they own with another source's token.
 *
 * Checked when a source is written (400 with the field) and again by the worker before it
 * resolves a reference, since the run's config, not the caller, decides which secret is read.
 */

/** Where a reference points: the store and the name without a leading slash. */
export interface SecretLocation {
  readonly store: 'ssm' | 'secretsmanager';
  readonly name: string;
}

/** Parses `ssm:/a/b`, `secretsmanager:a/b` or a bare SSM name (`/a/b`). */
export function secretLocation(reference: string): SecretLocation {
  if (reference.startsWith('secretsmanager:')) {
    return { store: 'secretsmanager', name: reference.slice('secretsmanager:'.length).replace(/^\/+/, '') };
  }
  const name = reference.startsWith('ssm:') ? reference.slice(4) : reference;
  return { store: 'ssm', name: name.replace(/^\/+/, '') };
}

/** `store:name`, the form shared secrets are compared in. */
function canonical(location: SecretLocation): string {
  return `${location.store}:${location.name}`;
}

/** True when two references name the same secret (`ssm:/a/b`, `/a/b` and `ssm:a/b` are one). */
export function sameSecret(a: string, b: string): boolean {
  return canonical(secretLocation(a)) === canonical(secretLocation(b));
}

/** The name prefix of a source's own secrets: `harvester/<sourceId>/`. */
export function sourceSecretPrefix(sourceId: string): string {
  return `harvester/${sourceId}/`;
}

/**
 * Why `reference` may not be used by `sourceId`, or undefined when it may.
 *
 * @example
 * secretBindingProblem('ssm:/harvester/acme/token', 'acme', []) // undefined
 * secretBindingProblem('ssm:/harvester/other/token', 'acme', []) // 'must name a secret under …'
 */
export function secretBindingProblem(
  reference: string,
  sourceId: string,
  sharedSecrets: readonly string[],
): string | undefined {
  const location = secretLocation(reference);
  const segments = location.name.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return 'must be a plain secret name (no empty, "." or ".." segments)';
  }
  if (sharedSecrets.some((shared) => sameSecret(shared, reference))) return undefined;
  const prefix = sourceSecretPrefix(sourceId);
  if (location.name.startsWith(prefix) && location.name.length > prefix.length) return undefined;
  return `must name a secret under "${prefix}" (SSM "/${prefix}…" or Secrets Manager "${prefix}…") or one of the stack's shared secrets`;
}

/**
 * `resolver` limited to the secrets `sourceId` may use: any other reference fails as a permanent
 * error before a secret store is asked.
 */
export function bindSecrets(
  resolver: SecretResolver,
  sourceId: string,
  sharedSecrets: readonly string[],
): SecretResolver {
  const bound = async (reference: string): Promise<string> => {
    const problem = secretBindingProblem(reference, sourceId, sharedSecrets);
    if (problem) {
      throw new ClassifiedError(
        'permanent',
        `secret reference ${reference} refused for source ${sourceId}: ${problem}`,
      );
    }
    return resolver(reference);
  };
  return Object.assign(bound, resolver.invalidate ? { invalidate: resolver.invalidate } : {});
}

/** Secret references in a connector config: every non-empty string field whose name ends in `Ref`. */
export function secretReferences(
  config: unknown,
  path: string[] = [],
): { path: string; reference: string }[] {
  if (Array.isArray(config)) return config.flatMap((item, i) => secretReferences(item, [...path, String(i)]));
  if (!config || typeof config !== 'object') return [];
  return Object.entries(config as Record<string, unknown>).flatMap(([key, value]) => {
    if (typeof value === 'string' && /Ref$/.test(key) && value.length > 0)
      return [{ path: [...path, key].join('.'), reference: value }];
    return secretReferences(value, [...path, key]);
  });
}
