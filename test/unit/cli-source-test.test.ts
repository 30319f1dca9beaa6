import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { createSecretResolver } from '../../lib/engine/index.js';
import { captureIo } from '../support/cli-io.js';
import { type FakeApi, startFakeApi } from '../support/fake-api.js';

const base = {
  connector: 'rest-json',
  rateLimit: null,
  page: null,
  sample: null,
  invalidOnPage: 0,
};

let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi({
    'POST /sources/open/test': {
      status: 200,
      body: {
        ...base,
        ok: false,
        sourceId: 'open',
        auth: 'not_configured',
        request: { url: 'https://api.example.com/records', status: 401, durationMs: 40 },
        problem: { errorClass: 'permanent', reason: 'HTTP 401' },
      },
    },
    'POST /sources/unresolved/test': {
      status: 200,
      body: {
        ...base,
        ok: false,
        sourceId: 'unresolved',
        auth: 'unknown',
        request: { url: null, status: null, durationMs: 3 },
        problem: {
          errorClass: 'permanent',
          reason:
            'SecretError: could not resolve secret reference ssm:/harvester/acme/token (ParameterNotFound)',
        },
      },
    },
    'POST /sources/closed/test': {
      status: 200,
      body: {
        ...base,
        ok: false,
        sourceId: 'closed',
        auth: 'not_configured',
        request: { url: 'http://127.0.0.1:9/records', status: null, durationMs: 2 },
        problem: { errorClass: 'transient', reason: 'connect ECONNREFUSED 127.0.0.1:9' },
      },
    },
  });
});
afterAll(() => api.close());

async function check(sourceId: string) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', '--endpoint', api.url, 'sources', 'test', sourceId], io);
  process.exitCode = undefined;
  return { code, stdout: io.stdout() };
}

describe('sources test says what happened', () => {
  it('a 401 without credentials configured says none are configured, not REFUSED', async () => {
    const res = await check('open');
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('no credentials configured, and the source answered 401: it wants some');
    expect(res.stdout).not.toContain('REFUSED');
  });

  it('no request made: credentials were not sent, and the problem names the cause', async () => {
    const res = await check('unresolved');
    expect(res.stdout).toContain('credentials not sent: no request was made');
    expect(res.stdout).not.toContain('credentials sent;');
    expect(res.stdout).toContain('(ParameterNotFound)');
  });
});

describe('sources test for a source that does not answer', () => {
  it('names where the request went and why nothing answered, never "no request made"', async () => {
    const res = await check('closed');
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(
      'FAILED: http://127.0.0.1:9/records did not answer (2 ms): connect ECONNREFUSED 127.0.0.1:9',
    );
    expect(res.stdout).not.toContain('no request made');
  });
});

describe('an unresolvable secret reference names the cause and the command that creates it', () => {
  const named = (name: string) => async () => {
    throw Object.assign(new Error('not there'), { name });
  };

  it('a missing SSM parameter: ParameterNotFound and aws ssm put-parameter against the emulator', async () => {
    const resolve = createSecretResolver({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:5000',
      fetchSecret: named('ParameterNotFound'),
    });
    await expect(resolve('ssm:/harvester/acme/token')).rejects.toThrow(
      "could not resolve secret reference ssm:/harvester/acme/token (ParameterNotFound): no such SSM parameter; create it: aws ssm put-parameter --endpoint-url http://127.0.0.1:5000 --name /harvester/acme/token --type SecureString --value '<secret>'",
    );
  });

  it('a missing Secrets Manager secret: ResourceNotFoundException and aws secretsmanager create-secret', async () => {
    const resolve = createSecretResolver({
      region: 'us-east-1',
      fetchSecret: named('ResourceNotFoundException'),
    });
    await expect(resolve('secretsmanager:harvester/acme/token')).rejects.toThrow(
      "(ResourceNotFoundException): no such secret; create it: aws secretsmanager create-secret --name harvester/acme/token --secret-string '<secret>'",
    );
  });

  it('access denied names the cause and offers no create command', async () => {
    const resolve = createSecretResolver({
      region: 'us-east-1',
      fetchSecret: named('AccessDeniedException'),
    });
    const error = (await resolve('ssm:/x').catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('could not resolve secret reference ssm:/x (AccessDeniedException)');
  });
});
