import { createHash } from 'node:crypto';

/**
 * Who a source's requests are counted against: the connector, the origin it talks to and the
 * reference of the secret it sends (null: none, which rate-limited APIs count per client address).
 * The reference, never the secret's value; and even the reference only leaves here hashed.
 */
export interface CredentialIdentity {
  readonly connector: string;
  readonly origin: string;
  readonly secretRef: string | null;
}

/**
 * The key of a credential's budget record: a hash, so the record names no secret reference.
 *
 * @example
 * credentialKey({ connector: 'github-issues', origin: 'https://api.github.com', secretRef: 'ssm:/org/gh' });
 * // 'cred-3f1c…' (32 hex digits)
 */
export function credentialKey(identity: CredentialIdentity): string {
  const material = [identity.connector, identity.origin, identity.secretRef ?? '(none)'].join('\n');
  return `cred-${createHash('sha256').update(material).digest('hex').slice(0, 32)}`;
}
