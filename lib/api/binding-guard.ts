import { originProblem } from '../config/origins.js';
import { sameSecret, secretBindingProblem, secretReferences } from '../connectors/secret-binding.js';
import { urlProblems } from '../connectors/url-policy.js';
import { sourceSecretOrigins } from '../engine/index.js';
import { ClassifiedError } from '../retry/errors.js';
import type { ApiDeps } from './deps.js';
import type { FieldError } from './errors.js';
import { STRICT_SOURCE_GUARD, urlFields } from './source-guard.js';

/**
 * The API's side of origin-bound secrets (lib/connectors/secret-origins.ts): a source config that
 * sends a secret may point only at origins its binding allows, and a binding names only the
 * source's own secrets and plain https origins the stack's posture accepts.
 */

/**
 * Where a config's URLs leave the origins its secrets are bound to (empty when none): each URL
 * field's origin must be bound to every secret reference of the config. So re-pointing a source
 * that keeps its secret is refused unless an administrator re-binds the secret first.
 */
export async function unboundOriginProblems(
  deps: ApiDeps,
  sourceId: string,
  config: Record<string, unknown>,
): Promise<FieldError[]> {
  const references = secretReferences(config);
  if (references.length === 0) return [];
  const origins = sourceSecretOrigins(deps, sourceId);
  const problems: FieldError[] = [];
  for (const { path, reference } of references) {
    let allowed: readonly string[] | undefined;
    try {
      allowed = await origins.originsFor(reference);
    } catch (error) {
      if (!(error instanceof ClassifiedError)) throw error;
      problems.push({ path, message: error.message });
      continue;
    }
    if (!allowed || allowed.length === 0) {
      problems.push({
        path,
        message: `secret ${reference} is bound to no origin; an administrator binds it first with PUT /secret-bindings/${sourceId}`,
      });
      continue;
    }
    for (const field of urlFields(config)) {
      const origin = new URL(field.url).origin;
      if (!allowed.includes(origin))
        problems.push({
          path: field.path,
          message: `origin ${origin} is not bound to secret ${reference} (bound: ${allowed.join(', ')}); an administrator re-binds it with PUT /secret-bindings/${sourceId}`,
        });
    }
  }
  return problems;
}

/** What is wrong with a binding set for `sourceId` (empty when it may be stored). */
export async function bindingSetProblems(
  deps: ApiDeps,
  sourceId: string,
  bindings: Readonly<Record<string, readonly string[]>>,
): Promise<FieldError[]> {
  const guard = deps.sourceGuard ?? STRICT_SOURCE_GUARD;
  const problems: FieldError[] = [];
  for (const [reference, origins] of Object.entries(bindings)) {
    const path = `bindings.${reference}`;
    if (guard.policy.sharedSecrets.some((shared) => sameSecret(shared, reference))) {
      problems.push({
        path,
        message: 'is a shared secret: its origins are the stack setting sharedSecretRefs, not a binding',
      });
      continue;
    }
    const own = secretBindingProblem(reference, sourceId, []);
    if (own) problems.push({ path, message: own });
    for (const [i, origin] of origins.entries()) {
      const problem = originProblem(origin, guard.policy.allowLoopback);
      if (problem) {
        problems.push({ path: `${path}.${i}`, message: `${origin} ${problem}` });
        continue;
      }
      const found = await urlProblems(origin, {
        policy: guard.policy,
        lookup: guard.lookup,
        credentialed: true,
        unresolved: 'accept',
      });
      problems.push(...found.map(({ message }) => ({ path: `${path}.${i}`, message })));
    }
  }
  return problems;
}
