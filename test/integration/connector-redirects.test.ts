import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import { githubIssuesConnector } from '../../lib/connectors/github-issues/index.js';
import { restJsonConnector } from '../../lib/connectors/rest-json/index.js';
import { ClassifiedError } from '../../lib/retry/errors.js';

/**
 * Two real HTTP servers on different ports are two origins. The source origin redirects; the
 * other origin records every request it gets, so the test sees exactly which headers crossed.
 */
interface Origin {
  readonly server: Server;
  readonly url: string;
  readonly received: { path: string; headers: IncomingHttpHeaders }[];
  /** Path → redirect target; any other path answers a JSON list of one record. */
  readonly redirects: Map<string, string>;
}

async function startOrigin(host: string): Promise<Origin> {
  const received: Origin['received'] = [];
  const redirects = new Map<string, string>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    received.push({ path, headers: req.headers });
    const target = redirects.get(path);
    if (target) {
      res.writeHead(302, { location: target }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify([{ id: 1, number: 1, updatedAt: '2026-01-01T00:00:00Z' }]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${host}:${port}`, received, redirects };
}

const SECRET = 'sekrit-value-0123456789';
const ctx: ConnectorContext = { fetch: globalThis.fetch, secrets: async () => SECRET, since: null };

let source: Origin;
let other: Origin;

beforeAll(async () => {
  source = await startOrigin('127.0.0.1');
  // `localhost` on another port: a different origin on the same machine.
  other = await startOrigin('localhost');
});
afterAll(async () => {
  await Promise.all([source, other].map((o) => new Promise((resolve) => o.server.close(resolve))));
});
afterEach(() => {
  for (const origin of [source, other]) {
    origin.received.length = 0;
    origin.redirects.clear();
  }
});

const restConfig = (extra: Record<string, unknown> = {}) =>
  restJsonConnector.configSchema.parse({
    url: `${source.url}/records`,
    idField: 'id',
    updatedAtField: 'updatedAt',
    pagination: { type: 'page' },
    auth: { header: 'X-Api-Key', prefix: '', secretRef: 'harvester/s/key' },
    ...extra,
  });

/** Every header value the other origin received, lower-cased names. */
const crossed = () => other.received.flatMap((r) => Object.entries(r.headers));

describe('redirects across origins', () => {
  it('refuses a cross-origin redirect as a permanent error before the other origin is contacted', async () => {
    source.redirects.set('/records', `${other.url}/steal`);
    const error = await restJsonConnector.fetchPage(restConfig(), null, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClassifiedError);
    expect(error).toMatchObject({ errorClass: 'permanent' });
    expect((error as Error).message).toMatch(/another origin/);
    expect(restJsonConnector.classify(error).errorClass).toBe('permanent');
    expect(other.received).toEqual([]);
    // Two-sided: the source itself did get the credential.
    expect(source.received[0]?.headers['x-api-key']).toBe(SECRET);
  });

  it('when allowed, follows it without any credential header of any name', async () => {
    source.redirects.set('/records', `${other.url}/moved`);
    const page = await restJsonConnector.fetchPage(
      restConfig({ crossOriginRedirects: 'follow-without-credentials' }),
      null,
      ctx,
    );
    expect(page.items).toHaveLength(1);
    expect(other.received).toHaveLength(1);
    expect(crossed().map(([name]) => name)).not.toContain('x-api-key');
    expect(crossed().map(([name]) => name)).not.toContain('authorization');
    expect(crossed().some(([, value]) => String(value).includes(SECRET))).toBe(false);
  });

  it('never hands the GitHub token to another origin', async () => {
    const config = githubIssuesConnector.configSchema.parse({
      owner: 'acme',
      repo: 'app',
      baseUrl: source.url,
      tokenRef: 'harvester/s/token',
    });
    source.redirects.set('/repos/acme/app/issues', `${other.url}/issues`);
    await expect(githubIssuesConnector.fetchPage(config, null, ctx)).rejects.toThrow(/another origin/);
    expect(other.received).toEqual([]);
  });
});

describe('redirects within the origin', () => {
  it('follows a same-origin redirect with the credential', async () => {
    source.redirects.set('/records', '/v2/records');
    const page = await restJsonConnector.fetchPage(restConfig(), null, ctx);
    expect(page.items).toHaveLength(1);
    expect(source.received.map((r) => [r.path, r.headers['x-api-key']])).toEqual([
      ['/records', SECRET],
      ['/v2/records', SECRET],
    ]);
    expect(other.received).toEqual([]);
  });

  it('stops a redirect loop after a bounded number of hops', async () => {
    source.redirects.set('/records', '/loop');
    source.redirects.set('/loop', '/records');
    await expect(restJsonConnector.fetchPage(restConfig(), null, ctx)).rejects.toThrow(
      /more than 5 redirects/,
    );
    expect(source.received.length).toBe(6);
  });
});
