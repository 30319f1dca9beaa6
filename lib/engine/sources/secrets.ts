import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { SecretResolver } from '../../connectors/contract.js';

/** Raised when a secret reference cannot be resolved; the message names the reference, never a value. */
export class SecretError extends Error {
  override readonly name = 'SecretError';
}

/**
 * How long a resolved secret is reused. Short, so a rotated secret is picked up within minutes
 * even when the source keeps accepting the old one; a rejected credential is re-read at once
 * (see `withCredential` in lib/connectors/credentials.ts).
 */
export const SECRET_CACHE_TTL_MS = 5 * 60_000;

/**
 * Resolves secret references: `ssm:/harvester/<sourceId>/token` (SSM SecureString) or
 * `secretsmanager:harvester/<sourceId>/token`; a bare name is an SSM parameter. Values are
 * cached per process (a Lambda instance) for {@link SECRET_CACHE_TTL_MS}, never logged, never
 * stored; `invalidate` drops one at once.
 */
export function createSecretResolver(options: {
  region: string;
  endpoint?: string | undefined;
  /** Epoch ms; injected by tests. */
  now?: () => number;
  /** Injected by tests (the SDK call is replaced, the cache is the one under test). */
  fetchSecret?: (reference: string) => Promise<string>;
}): SecretResolver {
  const now = options.now ?? Date.now;
  const base = {
    region: options.region,
    ...(options.endpoint
      ? { endpoint: options.endpoint, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } }
      : {}),
  };
  let ssm: SSMClient | undefined;
  let secretsManager: SecretsManagerClient | undefined;
  const cache = new Map<string, { value: Promise<string>; expiresAt: number }>();
  const fromStore = async (reference: string): Promise<string> => {
    if (reference.startsWith('secretsmanager:')) {
      secretsManager ??= new SecretsManagerClient(base);
      const { SecretString } = await secretsManager.send(
        new GetSecretValueCommand({ SecretId: reference.slice('secretsmanager:'.length) }),
      );
      if (!SecretString) throw new SecretError(`secret ${reference} has no string value`);
      return SecretString;
    }
    ssm ??= new SSMClient(base);
    const name = reference.startsWith('ssm:') ? reference.slice(4) : reference;
    const { Parameter } = await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
    if (!Parameter?.Value) throw new SecretError(`parameter ${reference} has no value`);
    return Parameter.Value;
  };
  const resolve = options.fetchSecret ?? fromStore;
  const resolver = (reference: string): Promise<string> => {
    const cached = cache.get(reference);
    if (cached && cached.expiresAt > now()) return cached.value;
    const value = resolve(reference).catch((error: unknown) => {
      if (cache.get(reference)?.value === value) cache.delete(reference);
      throw new SecretError(missingSecretMessage(reference, error, options.endpoint), { cause: error });
    });
    cache.set(reference, { value, expiresAt: now() + SECRET_CACHE_TTL_MS });
    return value;
  };
  return Object.assign(resolver, {
    invalidate: (reference: string) => {
      cache.delete(reference);
    },
  });
}

/**
 * Why a reference did not resolve, in the store's own words (`ParameterNotFound`,
 * `ResourceNotFoundException`, `AccessDeniedException`), and for a missing one the command that
 * creates it — against the emulator when the stack runs locally (`endpoint` set).
 */
export function missingSecretMessage(reference: string, error: unknown, endpoint?: string): string {
  const cause = (error as { name?: string })?.name ?? 'Error';
  const base = `could not resolve secret reference ${reference} (${cause})`;
  const local = endpoint ? ` --endpoint-url ${endpoint}` : '';
  if (cause === 'ParameterNotFound') {
    const name = reference.startsWith('ssm:') ? reference.slice(4) : reference;
    return `${base}: no such SSM parameter; create it: aws ssm put-parameter${local} --name ${name} --type SecureString --value '<secret>'`;
  }
  if (cause === 'ResourceNotFoundException' && reference.startsWith('secretsmanager:'))
    return `${base}: no such secret; create it: aws secretsmanager create-secret${local} --name ${reference.slice('secretsmanager:'.length)} --secret-string '<secret>'`;
  return base;
}
