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
    const signed = await signer.sign(
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
    );
    // fetch sets Host itself (to the same url.host that was signed) and refuses to be told.
    const { host: _host, ...rest } = signed.headers as Record<string, string>;
    return rest;
  };
}
