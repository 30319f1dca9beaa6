import type { Problem } from '../api/problems.js';
import { parseJson } from '../json/lossless.js';
import { checkApiUrl } from './api-url.js';
import { fetchSend, type HttpAnswer, nodeHttpSend } from './http.js';
import type { RequestSigner } from './sigv4.js';
import { CLI_VERSION } from './version.js';

/**
 * The CLI's HTTP client for the admin API: JSON in, JSON out, problem+json turned into
 * {@link ApiProblemError}. Against AWS (an https endpoint) requests are SigV4-signed; against the
 * local dev server (http on loopback) they are sent as they are.
 */

/** The API answered with a problem. */
export class ApiProblemError extends Error {
  override readonly name = 'ApiProblemError';
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
  }
}

/** The API could not be reached, or answered something that is not the API. */
export class ApiUnreachableError extends Error {
  override readonly name = 'ApiUnreachableError';
}

/** Where the API is and how to sign for it. */
export interface ApiClientOptions {
  readonly endpoint: string;
  readonly signer?: RequestSigner;
  readonly fetch?: typeof fetch;
  /** Where the endpoint came from (`--endpoint`, `HARVESTER_API_URL`, the default), for hints. */
  readonly endpointFrom?: string;
}

/** A thin client of the admin API. */
export class ApiClient {
  readonly endpoint: URL;

  constructor(private readonly options: ApiClientOptions) {
    this.endpoint = new URL(options.endpoint.endsWith('/') ? options.endpoint : `${options.endpoint}/`);
  }

  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
    const qs = search.toString();
    return this.request<T>('GET', qs ? `${path}?${qs}` : path);
  }

  /** Sends a request; resolves the JSON body (undefined for 204), rejects with the API's problem. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.send<T>(method, path, body)).body;
  }

  /** Like {@link ApiClient.request}, with the status (201 created vs 200 replaced). */
  async send<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const url = new URL(path.replace(/^\//, ''), this.endpoint);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      // The API records runs started with it as triggered by `cli`.
      'user-agent': `harvester-cli/${CLI_VERSION}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    };
    if (this.options.signer)
      headers = await this.options.signer({
        method,
        url,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
      });
    let response: HttpAnswer;
    const send = this.options.fetch ? fetchSend(this.options.fetch) : nodeHttpSend;
    try {
      response = await send(url, {
        method,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiUnreachableError(
        unreachableMessage(
          this.endpoint,
          cause?.code ?? cause?.message ?? String(error),
          this.options.endpointFrom,
        ),
      );
    }
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('problem+json')) throw new ApiProblemError(JSON.parse(text) as Problem);
    if (!response.ok) {
      // API Gateway's own refusals (403 for a bad signature) are plain JSON `{message}`.
      const message = safeMessage(text) ?? response.statusText;
      throw new ApiProblemError({
        type: 'about:blank',
        title: `HTTP ${response.status}`,
        status: response.status,
        detail: message,
        instance: url.pathname,
        requestId: response.headers.get('x-amzn-requestid') ?? '',
      });
    }
    if (response.status === 204 || text === '') return { status: response.status, body: undefined as T };
    if (!type.includes('json'))
      throw new ApiUnreachableError(`${url.origin} did not answer JSON; is it the Harvester API?`);
    // Lossless: a harvested number beyond 2^53 stays the digits the API sent.
    return { status: response.status, body: parseJson(text) as T };
  }
}

/**
 * Why the API could not be reached, and what to do: a refused loopback port almost always means
 * `harvester local` is not running (or listens elsewhere); a remote name that does not resolve
 * is a mistyped URL.
 */
export function unreachableMessage(endpoint: URL, code: string, from = '--endpoint'): string {
  const lines = [`cannot reach the API at ${endpoint.origin} (${code}); the URL is from ${from}`];
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(endpoint.hostname);
  if (code === 'ECONNREFUSED' && loopback)
    lines.push(
      '  is `harvester local` running? Start it in another terminal: harvester local',
      '  it prints the URL it listens on (export HARVESTER_API_URL=…); pass that URL with --endpoint or export it',
    );
  else if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    lines.push(
      '  check the URL: a deployed stack prints it as its ApiUrl output (aws cloudformation describe-stacks --query "Stacks[0].Outputs")',
    );
  return lines.join('\n');
}

function safeMessage(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : undefined;
  } catch {
    return text.slice(0, 200) || undefined;
  }
}

/** Default endpoint: the local dev server's default port. */
export const DEFAULT_ENDPOINT = 'http://127.0.0.1:8787';

/**
 * A client for `endpoint` (else `HARVESTER_API_URL`, else the local default). https endpoints
 * are signed with SigV4 for the region in the execute-api host name, or `AWS_REGION`.
 */
export async function createApiClient(
  endpoint: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ApiClient> {
  const origin =
    endpoint !== undefined ? '--endpoint' : env.HARVESTER_API_URL ? 'HARVESTER_API_URL' : undefined;
  const base = endpoint ?? (env.HARVESTER_API_URL || DEFAULT_ENDPOINT);
  const url = origin ? checkApiUrl(base, origin) : new URL(base);
  const from = origin ?? 'the default (no --endpoint, no HARVESTER_API_URL)';
  if (url.protocol !== 'https:') return new ApiClient({ endpoint: base, endpointFrom: from });
  const { regionOfEndpoint, sigV4Signer } = await import('./sigv4.js');
  const region = regionOfEndpoint(url) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
  return new ApiClient({ endpoint: base, endpointFrom: from, signer: sigV4Signer(region) });
}
