import { describe, expect, it } from 'vitest';
import { ApiClient, ApiProblemError, ApiUnreachableError, createApiClient } from '../../lib/cli/client.js';
import { parseScheduleOption, readConfigOption } from '../../lib/cli/commands/sources.js';
import { regionOfEndpoint, sigV4Signer } from '../../lib/cli/sigv4.js';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

function fakeFetch(status: number, body: string, contentType: string, seen: Request[] = []): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    seen.push(new Request(input, init));
    return new Response(body, { status, headers: { 'content-type': contentType } });
  }) as typeof fetch;
}

describe('SigV4 signing for execute-api', () => {
  it('reads the region from an execute-api host name', () => {
    expect(regionOfEndpoint(new URL('https://a1b2c3.execute-api.eu-west-1.amazonaws.com'))).toBe('eu-west-1');
    expect(regionOfEndpoint(new URL('https://api.example.com'))).toBeUndefined();
  });

  it('signs method, path, query and body with the execute-api scope', async () => {
    const sign = sigV4Signer('eu-west-1', CREDENTIALS);
    const url = new URL('https://a1b2c3.execute-api.eu-west-1.amazonaws.com/sources?limit=5');
    const headers = await sign({ method: 'GET', url, headers: { accept: 'application/json' } });
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(headers).not.toHaveProperty('host');
    const other = await sign({
      method: 'GET',
      url: new URL('https://a1b2c3.execute-api.eu-west-1.amazonaws.com/sources?limit=6'),
      headers: { accept: 'application/json' },
    });
    expect(other.authorization).not.toBe(headers.authorization);
  });

  it('is used for https endpoints and not for the local http dev server', async () => {
    const local = await createApiClient('http://127.0.0.1:8787', {});
    const remote = await createApiClient('https://a1b2c3.execute-api.eu-west-1.amazonaws.com', {});
    expect((local as unknown as { options: { signer?: unknown } }).options.signer).toBeUndefined();
    expect((remote as unknown as { options: { signer?: unknown } }).options.signer).toEqual(
      expect.any(Function),
    );
  });
});

describe('ApiClient', () => {
  it('turns a problem+json answer into ApiProblemError carrying the problem', async () => {
    const problem = {
      type: 'about:blank',
      title: 'Source busy',
      status: 409,
      detail: 'busy',
      instance: '/x',
      requestId: 'r',
      activeRunId: 'R1',
    };
    const client = new ApiClient({
      endpoint: 'http://api',
      fetch: fakeFetch(409, JSON.stringify(problem), 'application/problem+json'),
    });
    await expect(client.request('POST', '/sources/a/runs', { mode: 'full' })).rejects.toMatchObject({
      name: 'ApiProblemError',
      problem: { title: 'Source busy', activeRunId: 'R1' },
    });
  });

  it("turns API Gateway's own JSON refusals into a problem too", async () => {
    const client = new ApiClient({
      endpoint: 'http://api',
      fetch: fakeFetch(403, '{"message":"Forbidden"}', 'application/json'),
    });
    const error = await client.request('GET', '/sources').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiProblemError);
    expect((error as ApiProblemError).problem).toMatchObject({ status: 403, detail: 'Forbidden' });
  });

  it('sends JSON bodies with a JSON content type, relative to the endpoint path', async () => {
    const seen: Request[] = [];
    const client = new ApiClient({
      endpoint: 'https://host/harvester',
      fetch: fakeFetch(202, '{"runId":"R"}', 'application/json', seen),
    });
    await client.request('POST', '/sources/a/runs', { mode: 'full' });
    expect(seen[0]?.url).toBe('https://host/harvester/sources/a/runs');
    expect(seen[0]?.headers.get('content-type')).toBe('application/json');
    expect(await seen[0]?.json()).toEqual({ mode: 'full' });
  });

  it('reports an unreachable API without a stack trace', async () => {
    const failing = (async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    }) as typeof fetch;
    const client = new ApiClient({ endpoint: 'http://127.0.0.1:1', fetch: failing });
    await expect(client.request('GET', '/sources')).rejects.toThrow(ApiUnreachableError);
  });
});

describe('CLI option parsing', () => {
  it.each([
    ['rate(1 hour):incremental', { expression: 'rate(1 hour)', mode: 'incremental' }],
    ['cron(0 3 * * ? *):full', { expression: 'cron(0 3 * * ? *)', mode: 'full' }],
  ])('reads --schedule %s', (value, schedule) => {
    expect(parseScheduleOption(value)).toEqual(schedule);
  });

  it.each(['rate(6 hours)', 'cron(0 3 * * ? *)'])(
    'refuses --schedule %s: the mode is required, never assumed',
    (value) => {
      expect(() => parseScheduleOption(value)).toThrow('needs a mode after the expression');
    },
  );

  it('refuses --schedule with a mode that is not one', () => {
    expect(() => parseScheduleOption('rate(1 hour):everything')).toThrow(
      '"everything" is not a mode (one of full, incremental, reconciliation, dlq_retry)',
    );
  });

  it('reads --config as inline JSON and refuses non-objects', () => {
    expect(readConfigOption('{"url":"http://x"}')).toEqual({ url: 'http://x' });
    expect(() => readConfigOption('[1]')).toThrow('--config must be a JSON object');
    expect(() => readConfigOption('{url')).toThrow('--config is not valid JSON');
    expect(() => readConfigOption('@/nonexistent/file.json')).toThrow('cannot read --config file');
  });
});
