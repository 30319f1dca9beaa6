import { BaseProvider } from '@aws-lambda-powertools/parameters/base';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { ServiceEndpoints } from '../../config/endpoints.js';
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

/** The part of a Powertools Parameters provider the resolver uses. */
type Provider = Pick<BaseProvider, 'get'>;

/** Options of {@link createSecretResolver}. */
export interface SecretResolverOptions {
  readonly region: string;
  /** The endpoint of both stores unless `endpoints` names one (an emulator). */
  readonly endpoint?: string | undefined;
  /** The SSM and Secrets Manager endpoints (`config.endpoints`); a store left out is AWS's. */
  readonly endpoints?: ServiceEndpoints;
  /** Sign with the emulator's dummy credentials (`config.local`). Default: when an endpoint is given. */
  readonly local?: boolean;
  /** Applied to the SSM and Secrets Manager clients (the Lambda functions' tracer). */
  readonly capture?: <T>(client: T) => T;
  /**
   * Replaces the SDK call behind both stores (tests): the Powertools cache in front of it is
   * the one under test. Receives the whole reference.
   */
  readonly fetchSecret?: (reference: string) => Promise<string>;
}

/**
 * Resolves secret references: `ssm:/harvester/<sourceId>/token` (SSM SecureString) or
 * `secretsmanager:harvester/<sourceId>/token`; a bare name is an SSM parameter. Reads go
 * through Powertools Parameters, whose providers cache each value in the process (a Lambda
 * instance) for {@link SECRET_CACHE_TTL_MS} (`maxAge`); values are never logged, never stored.
 * `invalidate` makes the next read of that reference skip the cache (`forceFetch`), which is
 * how a credential the source rejected is re-read at once.
 */
export function createSecretResolver(options: SecretResolverOptions): SecretResolver {
  const locate = secretStores(options);
  const stale = new Set<string>();
  const maxAge = SECRET_CACHE_TTL_MS / 1_000;
  const resolver = async (reference: string): Promise<string> => {
    const forceFetch = stale.delete(reference);
    const { provider, name, decrypt } = locate(reference);
    let value: unknown;
    try {
      value = await provider.get(name, { maxAge, forceFetch, ...(decrypt ? { decrypt } : {}) });
    } catch (error) {
      // Powertools wraps the store's error (GetParameterError); its cause names what happened.
      const cause = error instanceof Error && error.cause ? error.cause : error;
      throw new SecretError(missingSecretMessage(reference, cause, storeEndpoint(options, reference)), {
        cause,
      });
    }
    if (typeof value !== 'string' || value === '')
      throw new SecretError(`secret reference ${reference} has no string value`);
    return value;
  };
  return Object.assign(resolver, {
    invalidate: (reference: string) => {
      stale.add(reference);
    },
  });
}

/** Where a reference is read: its provider (created on first use), its name there, and whether to decrypt. */
interface Location {
  readonly provider: Provider;
  readonly name: string;
  readonly decrypt?: true;
}

/** The SSM and Secrets Manager providers, created on first use, and which one a reference names. */
function secretStores(options: SecretResolverOptions): (reference: string) => Location {
  const capture = options.capture ?? (<T>(client: T) => client);
  const ssmEndpoint = options.endpoints?.ssm ?? options.endpoint;
  const secretsManagerEndpoint = options.endpoints?.secretsManager ?? options.endpoint;
  const local = options.local ?? (ssmEndpoint ?? secretsManagerEndpoint) !== undefined;
  const config = (endpoint: string | undefined) => ({
    region: options.region,
    ...(endpoint ? { endpoint } : {}),
    ...(local ? { credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } } : {}),
  });
  if (options.fetchSecret) {
    const injected = new FunctionProvider(options.fetchSecret);
    return (reference) => ({ provider: injected, name: reference });
  }
  let ssm: Provider | undefined;
  let secretsManager: Provider | undefined;
  return (reference) => {
    if (reference.startsWith('secretsmanager:')) {
      secretsManager ??= new SecretsProvider({
        awsSdkV3Client: capture(new SecretsManagerClient(config(secretsManagerEndpoint))),
      });
      return { provider: secretsManager, name: reference.slice('secretsmanager:'.length) };
    }
    ssm ??= new SSMProvider({ awsSdkV3Client: capture(new SSMClient(config(ssmEndpoint))) });
    const name = reference.startsWith('ssm:') ? reference.slice(4) : reference;
    return { provider: ssm, name, decrypt: true };
  };
}

/** The endpoint of the store a reference names, if it has one. */
function storeEndpoint(options: SecretResolverOptions, reference: string): string | undefined {
  const own = reference.startsWith('secretsmanager:')
    ? options.endpoints?.secretsManager
    : options.endpoints?.ssm;
  return own ?? options.endpoint;
}

/** A Powertools provider over a plain function: the same cache, another store (tests). */
class FunctionProvider extends BaseProvider {
  constructor(private readonly fetchSecret: (reference: string) => Promise<string>) {
    super({});
  }

  protected override _get(name: string): Promise<string> {
    return this.fetchSecret(name);
  }

  protected override _getMultiple(): Promise<Record<string, unknown>> {
    return Promise.reject(new SecretError('secret references are read one at a time'));
  }
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
