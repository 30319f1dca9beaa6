import type { FieldError } from './errors.js';

/**
 * Secrets enter a source config only as references (an SSM parameter or Secrets Manager name in
 * `tokenRef` / `auth.secretRef`), so configs can be stored, returned by the API and logged. This
 * guard catches the common ways a raw credential slips in anyway: a token pasted into a `…Ref`
 * field, a credential in an auth `prefix` (`Basic dXNl…`), a credential-named or credential-valued
 * query parameter (in a URL or in `extraQuery`), or a user:password URL. It is a seat belt, not a
 * proof: it knows well-known token shapes and names, and refuses rather than stores.
 */

const TOKEN_SHAPES: readonly RegExp[] = [
  /\bgh[pousr]_[A-Za-z0-9]{30,}/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/,
  /\bglpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/, // Slack
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/, // AWS access key ids
  /\bsk_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe-style secret keys
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, // JWTs
  /^(?:bearer|basic|token|digest)\s+\S{8,}/i,
];

/** Names of fields and query parameters that hold credentials when they hold a value. */
const SENSITIVE_NAME =
  /(token|secret|passw(?:or)?d|pwd|api[-_]?key|apikey|credential|private[-_]?key|access[-_]?key|authori[sz]ation|signature|session[-_]?id|bearer|jwt|^auth$|^key$|^sig$)/i;

/**
 * An auth prefix is a scheme word (`Bearer `, `token `, `Basic `) or nothing: anything longer
 * than one short word carries part of the credential.
 */
const PREFIX_SHAPE = /^(?:[A-Za-z][A-Za-z0-9._-]{0,19}[ =:]?)?$/;

function isReferenceField(key: string): boolean {
  return /Ref$/.test(key);
}

function urlProblem(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username || url.password) return 'must not carry credentials; use a secret reference';
  for (const [name, value] of url.searchParams) {
    if (SENSITIVE_NAME.test(name) || TOKEN_SHAPES.some((shape) => shape.test(value)))
      return `query parameter "${name}" looks like a credential; use a secret reference`;
  }
  return undefined;
}

function valueProblem(key: string, value: string, parent: string | undefined): string | undefined {
  // Only an auth block's `prefix` precedes a credential; other prefixes (S3 key prefixes) are data.
  if (key === 'prefix' && parent === 'auth' && !PREFIX_SHAPE.test(value))
    return 'must be a scheme word such as "Bearer " or empty; the credential itself belongs in the secret';
  if (TOKEN_SHAPES.some((shape) => shape.test(value)))
    return isReferenceField(key)
      ? 'must be the name of an SSM parameter or Secrets Manager secret, not the secret itself'
      : 'looks like a raw credential; store it in SSM or Secrets Manager and reference it';
  if (!isReferenceField(key) && SENSITIVE_NAME.test(key) && value.length > 0)
    return 'looks like a raw credential; store it in SSM or Secrets Manager and reference it';
  return urlProblem(value);
}

/** Fields of `config` that look like raw credentials, by dot path (empty when none). */
export function rawSecretFields(config: unknown, path: string[] = []): FieldError[] {
  if (Array.isArray(config)) return config.flatMap((item, i) => rawSecretFields(item, [...path, String(i)]));
  if (!config || typeof config !== 'object') return [];
  const found: FieldError[] = [];
  for (const [key, value] of Object.entries(config as Record<string, unknown>)) {
    const here = [...path, key];
    if (typeof value === 'string') {
      const problem = valueProblem(key, value, path.at(-1));
      if (problem) found.push({ path: here.join('.'), message: problem });
    } else {
      found.push(...rawSecretFields(value, here));
    }
  }
  return found;
}
