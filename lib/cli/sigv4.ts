import { Sha256 } from '@aws-crypto/sha256-js';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/** A request about to be sent; a signer returns the headers to send it with. */
export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

/** Adds authentication headers to a request. */
export type RequestSigner = (request: OutgoingRequest) => Promise<Record<string, string>>;

/** The region of an execute-api endpoint (`<id>.execute-api.<region>.amazonaws.com`), if it is one. */
export function regionOfEndpoint(url: URL): string | undefined {
  return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(url.hostname)?.[1];
}

/**
 * Signs requests for an IAM-authorized API Gateway API with SigV4 (service `execute-api`),
 * using the default credential chain (environment, SSO, profile, container, instance role).
 */
export function sigV4Signer(
  region: string,
  credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider = fromNodeProviderChain(),
): RequestSigner {
  const signer = new SignatureV4({
    service: 'execute-api',
    region,
    credentials,
    sha256: Sha256,
  });
  return async ({ method, url, headers, body }) => {
    const query: Record<string, string> = {};
    for (const [key, value] of url.searchParams) query[key] = value;
    const signed = await signWithHint(
      () =>
        signer.sign(
          new HttpRequest({
            method,
            protocol: url.protocol,
            hostname: url.hostname,
            ...(url.port ? { port: Number(url.port) } : {}),
            path: url.pathname,
            query,
            headers: { ...headers, host: url.host },
            ...(body === undefined ? {} : { body }),
          }),
        ),
      url,
    );
    // fetch sets Host itself (to the same url.host that was signed) and refuses to be told.
    const { host: _host, ...rest } = signed.headers as Record<string, string>;
    return rest;
  };
}

/** No AWS credentials could be found (or they expired) to sign a request to a deployed API. */
export class MissingCredentialsError extends Error {
  override readonly name = 'MissingCredentialsError';
}

/**
 * Signs, turning the SDK's "Could not load credentials from any providers" (or an expired SSO
 * token) into what to do about it: the profile to name, the login to run, and the http:// URL
 * that needs no credentials at all.
 */
async function signWithHint<T>(sign: () => Promise<T>, url: URL): Promise<T> {
  try {
    return await sign();
  } catch (error) {
    const name = (error as Error).name ?? '';
    const message = (error as Error).message ?? String(error);
    if (!/Credential|Token|SSO/i.test(`${name} ${message}`)) throw error;
    const profile = process.env.AWS_PROFILE;
    throw new MissingCredentialsError(
      [
        `no usable AWS credentials to sign requests to ${url.host} (${message})`,
        profile
          ? `  AWS_PROFILE is ${profile}: if it uses SSO, log in with: aws sso login --profile ${profile}`
          : '  name a profile: export AWS_PROFILE=<profile> (then, if it uses SSO: aws sso login), or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
        '  check with: aws sts get-caller-identity',
        '  for harvester local, use its http:// URL: no credentials needed',
      ].join('\n'),
      { cause: error },
    );
  }
}
