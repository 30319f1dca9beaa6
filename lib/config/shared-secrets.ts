import { originProblem } from './origins.js';

/**
 * The stack's shared secrets (`sharedSecretRefs`): secret references every source may use, each
 * with the explicit list of origins it may be sent to. There is no default origin list: a shared
 * secret without one would go wherever any source points, so whoever may write one source could
 * collect the organization's token.
 *
 * Written as a JSON object, in the stack setting and in `SHARED_SECRET_REFS` alike:
 * `{"ssm:/org/github-token": ["https://api.github.com"]}`.
 */

/** Shared secret reference → the origins it may be sent to. */
export type SharedSecretOrigins = Readonly<Record<string, readonly string[]>>;

/** A reference that is a plain SSM or Secrets Manager name: no wildcard, no ARN. */
function referenceProblem(reference: string): string | undefined {
  if (/[*?]/.test(reference)) return 'must name one secret (no wildcards)';
  if (/(^|:)arn:/i.test(reference)) return 'must be a name (ssm:/name or secretsmanager:name), not an ARN';
  if (!/^(ssm:\/|secretsmanager:|\/)[A-Za-z0-9_.\-/+=@]+$/.test(reference))
    return 'must be ssm:/name, secretsmanager:name or /name';
  return undefined;
}

/**
 * Parses and checks shared secrets; throws an Error naming every problem (a wildcard or ARN
 * reference, a missing or empty origin list, an origin that is not `https://host[:port]`).
 *
 * @example
 * parseSharedSecrets('{"ssm:/org/token":["https://api.github.com"]}', 'SHARED_SECRET_REFS', false)
 */
export function parseSharedSecrets(
  value: unknown,
  label: string,
  allowLoopback: boolean,
): SharedSecretOrigins {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return {};
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error(
        `${label} must be a JSON object of secret reference → origins, for example ` +
          '{"ssm:/org/github-token":["https://api.github.com"]}: a shared secret needs an explicit origin list',
      );
    }
  }
  if (Array.isArray(parsed)) {
    throw new Error(
      `${label} lists shared secrets without origins (${parsed.join(', ')}); give each its origins: ` +
        '{"ssm:/org/github-token":["https://api.github.com"]}',
    );
  }
  if (!parsed || typeof parsed !== 'object') throw new Error(`${label} must be a JSON object`);
  const problems: string[] = [];
  const result: Record<string, readonly string[]> = {};
  for (const [reference, origins] of Object.entries(parsed as Record<string, unknown>)) {
    const refProblem = referenceProblem(reference);
    if (refProblem) problems.push(`${reference}: ${refProblem}`);
    if (!Array.isArray(origins) || origins.length === 0) {
      problems.push(`${reference}: needs an explicit, non-empty origin list`);
      continue;
    }
    for (const origin of origins) {
      const problem = typeof origin === 'string' ? originProblem(origin, allowLoopback) : 'must be a string';
      if (problem) problems.push(`${reference}: origin ${String(origin)} ${problem}`);
    }
    result[reference] = (origins as string[]).map((origin) =>
      String(origin).replace(/\/$/, '').toLowerCase(),
    );
  }
  if (problems.length > 0) throw new Error(`${label}: ${problems.join('; ')}`);
  return result;
}
