import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { SecretResolver } from '../connectors/contract.js';

/** Raised when a secret reference cannot be resolved; the message names the reference, never a value. */
export class SecretError extends Error {
  override readonly name = 'SecretError';
}

/**
 * Resolves secret references: `ssm:/harvester/github-token` (SSM SecureString) or
 * `secretsmanager:harvester/github-token`; a bare name is an SSM parameter. Values are cached
 * for the life of the process (a Lambda instance), never logged, never stored.
 */
export function createSecretResolver(options: {
  region: string;
  endpoint?: string | undefined;
}): SecretResolver {
  const base = {
    region: options.region,
    ...(options.endpoint
      ? { endpoint: options.endpoint, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } }
      : {}),
  };
  let ssm: SSMClient | undefined;
  let secretsManager: SecretsManagerClient | undefined;
  const cache = new Map<string, Promise<string>>();
  const resolve = async (reference: string): Promise<string> => {
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
  return (reference) => {
    let value = cache.get(reference);
    if (!value) {
      value = resolve(reference).catch((error: unknown) => {
        cache.delete(reference);
        throw new SecretError(`could not resolve secret reference ${reference}`, { cause: error });
      });
      cache.set(reference, value);
    }
    return value;
  };
}
