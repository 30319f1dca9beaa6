import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rawSecretFields } from '../../lib/api/secret-guard.js';
import { boundedLookup, sourcePolicyProblems } from '../../lib/api/source-guard.js';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import { withCredential } from '../../lib/connectors/credentials.js';
import { classifyGitHub } from '../../lib/connectors/github-issues/classify.js';
import { restJsonConfigSchema } from '../../lib/connectors/rest-json/config.js';
import { bindSecrets, secretBindingProblem } from '../../lib/connectors/secret-binding.js';
import {
  addressKind,
  type HostLookup,
  type SourcePolicy,
  STRICT_SOURCE_POLICY,
  urlProblems,
} from '../../lib/connectors/url-policy.js';
import { createSecretResolver, SECRET_CACHE_TTL_MS } from '../../lib/engine/index.js';
import { SourceHttpError } from '../../lib/retry/errors.js';

const LOCAL: SourcePolicy = { ...STRICT_SOURCE_POLICY, allowLoopback: true, allowPrivate: true };
/** A resolver that knows a few names, and nothing else (no DNS in unit tests). */
const lookup: HostLookup = async (host) => {
  const table: Record<string, string[]> = {
    'api.example.com': ['93.184.216.34'],
    'internal.corp': ['10.0.0.5'],
    'rebind.example': ['93.184.216.34', '169.254.169.254'],
    'mapped.example': ['::ffff:169.254.169.254'],
  };
  const found = table[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const check = (url: string, policy = STRICT_SOURCE_POLICY, credentialed = false) =>
  urlProblems(url, { policy, lookup, credentialed, unresolved: 'refuse' }).then((p) =>
    p.map((x) => x.message),
  );

describe('addressKind', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['224.0.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['2a00:1450:4001:82a::200e', 'public'],
    ['64:ff9b:1::a00:1', 'private'],
    ['64:ff9b:1:ffff::1', 'private'],
    ['2002:7f00:1::1', 'reserved'],
    ['2002:0808:0808::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['2001:10::1', 'reserved'],
    ['2001:20::1', 'reserved'],
    ['2001:1ff:ffff::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['100::1', 'reserved'],
    ['100:0:0:1::1', 'reserved'],
    ['fec0::1', 'private'],
    ['feff::1', 'private'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['1234::1', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });
});

describe('source URLs (SSRF guard)', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://2852039166/', 'metadata'], // decimal
    ['http://0xa9fea9fe/', 'metadata'], // hex
    ['http://0251.0376.0251.0376/', 'metadata'], // octal
    ['http://[::ffff:169.254.169.254]/', 'metadata'], // IPv4-mapped
    ['http://[::ffff:a9fe:a9fe]/', 'metadata'],
    ['https://mapped.example/', 'metadata'], // a name resolving to a mapped address
    ['https://rebind.example/', 'metadata'], // any one bad address refuses the host
    ['http://127.0.0.1:9001/2018-06-01/runtime/invocation/next', 'loopback'], // the Lambda runtime API
    ['http://localhost:8080/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://0.0.0.0:80/', 'unspecified'],
    ['https://internal.corp/api', 'private network'],
    ['https://10.0.0.8/api', 'private network'],
  ])('refuses %s on AWS (%s)', async (url, what) => {
    const problems = await check(url);
    expect(problems.join('; ')).toContain(what);
  });

  it('accepts a public host on AWS', async () => {
    expect(await check('https://api.example.com/records')).toEqual([]);
  });

  it('allows loopback and private addresses only in a local stack, never metadata', async () => {
    expect(await check('http://127.0.0.1:9001/records', LOCAL)).toEqual([]);
    expect(await check('https://internal.corp/api', LOCAL)).toEqual([]);
    expect(await check('http://169.254.169.254/', LOCAL)).not.toEqual([]);
    expect(await check('http://[::ffff:169.254.169.254]/', LOCAL)).not.toEqual([]);
  });

  it('refuses http:// with a secret except on loopback in a local stack', async () => {
    expect((await check('http://api.example.com/x', STRICT_SOURCE_POLICY, true)).join()).toMatch(/https/);
    expect((await check('http://api.example.com/x', LOCAL, true)).join()).toMatch(/https/);
    expect(await check('http://127.0.0.1:8080/x', LOCAL, true)).toEqual([]);
    expect(await check('https://api.example.com/x', STRICT_SOURCE_POLICY, true)).toEqual([]);
    expect(await check('http://api.example.com/x', STRICT_SOURCE_POLICY, false)).toEqual([]);
  });

  it('enforces the host allow-list, with *.suffix for subdomains', async () => {
    const policy = { ...STRICT_SOURCE_POLICY, allowedHosts: ['*.example.com', 'api.github.com'] };
    expect(await check('https://api.example.com/x', policy)).toEqual([]);
    expect((await check('https://example.com.evil.test/x', policy)).join()).toMatch(/allowed source hosts/);
    expect((await check('https://internal.corp/x', policy)).join()).toMatch(/allowed source hosts/);
  });
});

describe('secrets bound to sources', () => {
  it.each([
    ['ssm:/harvester/acme/token', undefined],
    ['/harvester/acme/token', undefined],
    ['secretsmanager:harvester/acme/api-key', undefined],
    ['ssm:/harvester/other/token', 'harvester/acme/'],
    ['secretsmanager:harvester/other/api-key', 'harvester/acme/'],
    ['ssm:/harvester/acme', 'harvester/acme/'],
    ['ssm:/harvester/acme-two/token', 'harvester/acme/'],
    ['ssm:/harvester/acme/../other/token', '".."'],
    ['ssm:/org/github-token', 'harvester/acme/'],
  ])('%s for source acme → %s', (reference, expected) => {
    const problem = secretBindingProblem(reference, 'acme', []);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toContain(expected);
  });

  it("admits the stack's shared secrets, in either spelling", () => {
    expect(secretBindingProblem('/org/github-token', 'acme', ['ssm:/org/github-token'])).toBeUndefined();
    expect(secretBindingProblem('ssm:/org/other', 'acme', ['ssm:/org/github-token'])).toBeDefined();
  });

  it('the worker refuses an unbound reference without asking the secret store', async () => {
    const store = vi.fn(async () => 'value');
    const secrets = bindSecrets(store, 'acme', []);
    await expect(secrets('ssm:/harvester/other/token')).rejects.toMatchObject({ errorClass: 'permanent' });
    expect(store).not.toHaveBeenCalled();
    await expect(secrets('ssm:/harvester/acme/token')).resolves.toBe('value');
  });
});

describe('PUT /sources policy check', () => {
  const guard = { policy: STRICT_SOURCE_POLICY, lookup };
  const rest = (extra: Record<string, unknown>) =>
    restJsonConfigSchema.parse({
      url: 'https://api.example.com/records',
      idField: 'id',
      updatedAtField: 'updatedAt',
      pagination: { type: 'page' },
      ...extra,
    }) as unknown as Record<string, unknown>;

  it("names another source's secret and an http:// URL with a secret by field", async () => {
    const problems = await sourcePolicyProblems(
      'acme',
      rest({ url: 'http://api.example.com/records', auth: { secretRef: 'ssm:/harvester/other/key' } }),
      guard,
    );
    expect(problems.map((p) => p.path).sort()).toEqual(['auth.secretRef', 'url']);
  });

  it('checks every URL field, item URL templates included', async () => {
    const problems = await sourcePolicyProblems(
      'acme',
      rest({ itemUrl: 'http://169.254.169.254/{id}' }),
      guard,
    );
    expect(problems.map((p) => p.path)).toEqual(['itemUrl']);
  });

  it('accepts a host whose lookup hangs (the worker checks at connection), without waiting on it', async () => {
    const hanging: HostLookup = () => new Promise(() => undefined);
    const started = Date.now();
    const problems = await sourcePolicyProblems('acme', rest({ url: 'https://slow.example/x' }), {
      policy: STRICT_SOURCE_POLICY,
      lookup: boundedLookup(hanging, 50),
    });
    expect(problems).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('passes a config that keeps to the policy', async () => {
    expect(
      await sourcePolicyProblems('acme', rest({ auth: { secretRef: '/harvester/acme/key' } }), guard),
    ).toEqual([]);
  });
});

describe('raw credentials and header names', () => {
  it.each([
    [{ auth: { secretRef: '/harvester/a/k', prefix: 'Basic dXNlcjpwYXNzd29yZA==' } }, 'auth.prefix'],
    [{ url: 'https://api.example.com/x?Authorization=Basic%20dXNlcjpwYXNzd29yZA' }, 'url'],
    [{ url: 'https://api.example.com/x?X-Amz-Signature=abcdef0123456789' }, 'url'],
    [{ url: `https://api.example.com/x?q=ghp_${'a'.repeat(36)}` }, 'url'],
    [{ url: 'https://user:pw@api.example.com/x' }, 'url'],
    [{ extraQuery: { signature: 'abcdef0123456789' } }, 'extraQuery.signature'],
    [{ extraQuery: { key: 'AIzaSyD-abcdefgh' } }, 'extraQuery.key'],
  ])('refuses %j', (config, path) => {
    expect(rawSecretFields(config).map((e) => e.path)).toEqual([path]);
  });

  it.each([
    [{ auth: { secretRef: '/harvester/a/k', prefix: 'Bearer ' } }],
    [{ auth: { secretRef: '/harvester/a/k', prefix: 'token ' } }],
    [{ auth: { secretRef: '/harvester/a/k', prefix: '' } }],
    [{ extraQuery: { author: 'alice', format: 'json' } }],
    [{ url: 'https://api.example.com/x?page=2&sort=updated' }],
  ])('accepts %j', (config) => {
    expect(rawSecretFields(config)).toEqual([]);
  });

  it.each(['X-Api-Key\r\nX-Evil: 1', 'Host', 'host', 'Content-Length', 'X Api Key', ''])(
    'refuses the auth header name %j',
    (header) => {
      const parsed = restJsonConfigSchema.safeParse({
        url: 'https://api.example.com/x',
        idField: 'id',
        updatedAtField: 'u',
        pagination: { type: 'page' },
        auth: { header, secretRef: '/harvester/a/k' },
      });
      expect(parsed.success).toBe(false);
    },
  );

  it('accepts an ordinary credential header name', () => {
    const parsed = restJsonConfigSchema.safeParse({
      url: 'https://api.example.com/x',
      idField: 'id',
      updatedAtField: 'u',
      pagination: { type: 'page' },
      auth: { header: 'X-Api-Key', secretRef: '/harvester/a/k' },
    });
    expect(parsed.success).toBe(true);
  });
});

describe('secrets cache', () => {
  // Powertools Parameters times its cache with Date.now.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  it('reuses a value for five minutes, then reads the store again', async () => {
    let version = 1;
    const fetchSecret = vi.fn(async () => `v${version}`);
    const secrets = createSecretResolver({ region: 'us-east-1', fetchSecret });
    expect(await secrets('ssm:/harvester/a/t')).toBe('v1');
    version = 2;
    vi.setSystemTime(SECRET_CACHE_TTL_MS - 1);
    expect(await secrets('ssm:/harvester/a/t')).toBe('v1');
    vi.setSystemTime(SECRET_CACHE_TTL_MS + 1);
    expect(await secrets('ssm:/harvester/a/t')).toBe('v2');
    expect(fetchSecret).toHaveBeenCalledTimes(2);
  });

  it('invalidate drops the value at once', async () => {
    let version = 1;
    const secrets = createSecretResolver({
      region: 'us-east-1',
      fetchSecret: async () => `v${version}`,
    });
    await secrets('r');
    version = 2;
    secrets.invalidate?.('r');
    expect(await secrets('r')).toBe('v2');
  });

  it('forces one fetch of the invalidated reference only, then caches the fresh value again', async () => {
    const versions = new Map([
      ['a', 1],
      ['b', 1],
    ]);
    const fetchSecret = vi.fn(async (reference: string) => `${reference}${versions.get(reference)}`);
    const secrets = createSecretResolver({ region: 'us-east-1', fetchSecret });
    await secrets('a');
    await secrets('b');
    versions.set('a', 2).set('b', 2);
    secrets.invalidate?.('a');
    expect(await secrets('a')).toBe('a2');
    expect(await secrets('b')).toBe('b1');
    versions.set('a', 3);
    expect(await secrets('a')).toBe('a2');
    expect(fetchSecret).toHaveBeenCalledTimes(3);
  });
});

describe('credential refresh on rejection', () => {
  const rejected = (status: number, headers: Record<string, string> = {}) =>
    new SourceHttpError(status, headers, '{"message":"Bad credentials"}', 'https://api.github.com/x');
  const classify = (error: unknown) => classifyGitHub(error, 0);

  function context(values: string[]) {
    let current = 0;
    const secrets = Object.assign(async () => values[current]!, { invalidate: vi.fn(() => void current++) });
    return { ctx: { fetch, secrets, since: null } as ConnectorContext, secrets };
  }

  it('re-reads a rotated secret after a 401 and retries once with it', async () => {
    const { ctx } = context(['old', 'new']);
    const sent: (string | undefined)[] = [];
    const result = await withCredential(ctx, 'r', classify, async (secret) => {
      sent.push(secret);
      if (secret === 'old') throw rejected(401);
      return 'ok';
    });
    expect(result).toBe('ok');
    expect(sent).toEqual(['old', 'new']);
  });

  it('keeps the error when the store still holds the rejected value', async () => {
    const { ctx } = context(['same', 'same']);
    const request = vi.fn(async () => {
      throw rejected(401);
    });
    await expect(withCredential(ctx, 'r', classify, request)).rejects.toBeInstanceOf(SourceHttpError);
    expect(request).toHaveBeenCalledTimes(1);
  });

  it('does not treat a rate-limit 403 as a bad credential', async () => {
    const { ctx, secrets } = context(['old', 'new']);
    const limited = rejected(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '100' });
    await expect(
      withCredential(ctx, 'r', classify, async () => {
        throw limited;
      }),
    ).rejects.toBe(limited);
    expect(secrets.invalidate).not.toHaveBeenCalled();
  });
});
