import { CLI_COMMANDS } from '../config/cli-commands.js';
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
  const needed = [...new Set(urlFields(config).map((field) => new URL(field.url).origin))];
  const problems: FieldError[] = [];
  let fix: Promise<string> | undefined;
  const rebind = () => (fix ??= rebindCommand(deps, sourceId, references, needed));
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
        message: `secret ${reference} is bound to no origin; an administrator binds it first: ${await rebind()}`,
      });
      continue;
    }
    for (const field of urlFields(config)) {
      const origin = new URL(field.url).origin;
      if (!allowed.includes(origin))
        problems.push({
          path: field.path,
          message: isShared(deps, reference)
            ? `origin ${origin} is not bound to secret ${reference} (bound: ${allowed.join(', ')}); it is a shared secret, whose origins are the stack setting sharedSecretRefs`
            : `origin ${origin} is not bound to secret ${reference} (bound: ${allowed.join(', ')}); an administrator re-binds it first: ${await rebind()}`,
        });
    }
  }
  return problems;
}

function isShared(deps: ApiDeps, reference: string): boolean {
  const guard = deps.sourceGuard ?? STRICT_SOURCE_GUARD;
  return guard.policy.sharedSecrets.some((shared) => sameSecret(shared, reference));
}

/**
 * The `harvester secrets bind` that lets this config be stored: since it replaces the source's
 * bindings as a whole, it keeps every binding the source has and adds the config's URL origins
 * to each of the config's own secrets (connector defaults such as `baseUrl` are in the config by
 * now, so its URL fields name every origin it calls).
 */
async function rebindCommand(
  deps: ApiDeps,
  sourceId: string,
  references: readonly { reference: string }[],
  needed: readonly string[],
): Promise<string> {
  const current = (await deps.secretBindings.get(sourceId))?.bindings ?? {};
  const wanted: Record<string, string[]> = Object.fromEntries(
    Object.entries(current).map(([reference, origins]) => [reference, [...origins]]),
  );
  for (const { reference } of references) {
    if (isShared(deps, reference)) continue;
    const origins = new Set([...(wanted[reference] ?? []), ...needed]);
    if (origins.size > 0) wanted[reference] = [...origins];
  }
  // Nothing to bind to (no URL in the config, no binding yet): show what there is instead.
  if (Object.keys(wanted).length === 0) return CLI_COMMANDS.secretsShow(sourceId);
  return CLI_COMMANDS.secretsBind(sourceId, wanted);
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
