import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { parseSecretOption } from '../../lib/cli/commands/secrets.js';
import { guardedFetch } from '../../lib/connectors/guarded-fetch.js';
import { startRun } from '../../lib/engine/index.js';
import { stableHash } from '../../lib/run/hash.js';
import { apiOver, callApi } from '../support/api.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { freePorts, type Listener, startListener } from '../support/listener.js';

/**
 * Where a secret may go, tried as an attacker would: one test per attack. The owner's host and
 * the attacker's are two listeners on their own ports (two origins); each test asserts the
 * attacker's host never saw the token, and that the refusal is classified and names the origin.
 */

const TOKEN = 'tok-victim-0123456789abcdef';
const ORG_TOKEN = 'tok-org-fedcba9876543210';
const VICTIM_REF = 'ssm:/harvester/victim/token';
const ORG_REF = 'ssm:/org/github-token';
const values: Record<string, string> = { [VICTIM_REF]: TOKEN, [ORG_REF]: ORG_TOKEN };

// The engine's config names the owner's origin, so both listeners' ports are chosen up front.
const [OWNER_PORT, ATTACKER_PORT] = await freePorts(2);
const env = { SHARED_SECRET_REFS: JSON.stringify({ [ORG_REF]: [`http://127.0.0.1:${OWNER_PORT}`] }) };

const { engine } = useEngineWithFakes('secret-origins', {
  workers: 1,
  env,
  secrets: async (reference) => values[reference] ?? 'unknown',
  // `plain.example` is a host name that reaches the attacker over plain http (not loopback by name).
  fetch: guardedFetch(
    {
      allowLoopback: true,
      allowPrivate: true,
      allowedHosts: [],
      sharedSecrets: [],
      sharedSecretOrigins: {},
    },
    { connectLookup: (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]) },
  ),
});
let owner: Listener;
let attacker: Listener;
let api: ApiDeps;

beforeAll(async () => {
  owner = await startListener(OWNER_PORT);
  attacker = await startListener(ATTACKER_PORT);
  api = apiOver(engine, env);
});
afterAll(async () => {
  await Promise.all([owner.stop(), attacker.stop()]);
});

const call = (method: string, url: string, body?: unknown) => callApi(api, method, url, body);

const restConfig = (base: string, secretRef = VICTIM_REF) => ({
  url: `${base}/records`,
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
  auth: { header: 'Authorization', prefix: 'Bearer ', secretRef },
});

async function runToEnd(sourceId: string) {
  const run = await startRun(engine.deps, { sourceId, mode: 'full' });
  const ended = await waitForRun(engine.deps, run.runId);
  const entries = await engine.deps.deadLetters.listAll(sourceId);
  return { ended, reasons: [ended.failure?.message ?? '', ...entries.map((e) => e.reason)].join('\n') };
}

describe('a secret goes only to the origins it is bound to', () => {
  beforeAll(async () => {
    const bound = await call('PUT', '/secret-bindings/victim', { bindings: { [VICTIM_REF]: [owner.url] } });
    expect(bound.status).toBe(200);
    const put = await call('PUT', '/sources/victim', {
      connector: 'rest-json',
      config: restConfig(owner.url),
    });
    expect(put.status).toBe(201);
  });

  it('re-point and test: re-pointing a source that keeps its secret is refused, and no check sends it', async () => {
    const repoint = await call('PUT', '/sources/victim', {
      connector: 'rest-json',
      config: restConfig(attacker.url),
    });
    const check = await call('POST', '/sources/victim/test');

    expect(repoint.status).toBe(400);
    expect(JSON.stringify(repoint.json.errors)).toContain(`origin ${attacker.url} is not bound`);
    expect(check.json.ok).toBe(true); // still the owner's source
    expect(owner.saw(TOKEN)).toBe(true);
    expect(attacker.saw(TOKEN)).toBe(false);
  });

  it('a refused re-point names the harvester command that allows it, and that command, pasted, does', async () => {
    const ref = 'ssm:/harvester/hinted/token';
    values[ref] = 'tok-hinted';
    await call('PUT', '/secret-bindings/hinted', { bindings: { [ref]: [owner.url] } });
    expect(
      (await call('PUT', '/sources/hinted', { connector: 'rest-json', config: restConfig(owner.url, ref) }))
        .status,
    ).toBe(201);

    const refused = await call('PUT', '/sources/hinted', {
      connector: 'rest-json',
      config: restConfig(attacker.url, ref),
    });
    const message = (refused.json.errors as { message: string }[]).map((e) => e.message).join('\n');
    const command = /re-binds it first: (harvester \S.*)$/m.exec(message)?.[1];

    // The whole binding set, since `secrets bind` replaces it: the origin it had and the new one.
    expect(command).toBe(`harvester secrets bind hinted --secret ${ref}=${owner.url},${attacker.url}`);
    // Pasted: what the CLI sends for it (its own parser of --secret), then the same re-point.
    const [, verb, sub, sourceId, flag, secret] = command!.split(' ');
    expect([verb, sub, flag]).toEqual(['secrets', 'bind', '--secret']);
    const { reference, origins } = parseSecretOption(secret!);
    await call('PUT', `/secret-bindings/${sourceId}`, { bindings: { [reference]: origins } });
    const again = await call('PUT', '/sources/hinted', {
      connector: 'rest-json',
      config: restConfig(attacker.url, ref),
    });
    expect(again.status).toBe(200);
  });

  it('a secret bound to nothing: the refusal binds it, with the origin the config names', async () => {
    const ref = 'ssm:/harvester/fresh/token';
    const refused = await call('PUT', '/sources/fresh', {
      connector: 'rest-json',
      config: restConfig(owner.url, ref),
    });

    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json.errors)).toContain(
      `secret ${ref} is bound to no origin; an administrator binds it first: harvester secrets bind fresh --secret ${ref}=${owner.url}`,
    );
  });

  it('re-point and run: a request to an origin the binding no longer holds is refused at request time', async () => {
    // An admin once bound both hosts and the source was pointed at the second; the binding was narrowed since.
    await call('PUT', '/secret-bindings/victim', { bindings: { [VICTIM_REF]: [owner.url, attacker.url] } });
    expect(
      (await call('PUT', '/sources/victim', { connector: 'rest-json', config: restConfig(attacker.url) }))
        .status,
    ).toBe(200);
    await call('PUT', '/secret-bindings/victim', { bindings: { [VICTIM_REF]: [owner.url] } });

    const { ended, reasons } = await runToEnd('victim');

    expect(ended.state).toBe('failed');
    expect(reasons).toContain(`may not be sent to ${attacker.url}`);
    expect(attacker.saw(TOKEN)).toBe(false);
    await call('PUT', '/sources/victim', { connector: 'rest-json', config: restConfig(owner.url) });
  });

  it('echoing host: a connection check never answers the secret, even when the source echoes it back', async () => {
    const check = await call('POST', '/sources/victim/test');

    expect(check.json.ok).toBe(true);
    expect(owner.saw(TOKEN)).toBe(true); // the owner's host echoed the Authorization header …
    expect(JSON.stringify(check.json)).not.toContain(TOKEN); // … and the answer does not carry it
    expect(check.json.sample.data.headers.authorization).toBe('Bearer <redacted>');
  });

  it('shared secret to a foreign host: refused when saved, and refused by the worker for a row saved before', async () => {
    const saved = await call('PUT', '/sources/borrower', {
      connector: 'rest-json',
      config: restConfig(attacker.url, ORG_REF),
    });
    expect(saved.status).toBe(400);
    expect(JSON.stringify(saved.json.errors)).toContain(
      `origin ${attacker.url} is not bound to secret ${ORG_REF}`,
    );

    // A row the API signed before shared secrets had origins.
    const config = restConfig(attacker.url, ORG_REF);
    await engine.deps.sources.put(
      {
        sourceId: 'borrower',
        connector: 'rest-json',
        config,
        schedules: [],
        configHash: stableHash({ connector: 'rest-json', config }),
        configMac: await engine.deps.trust.signConfig('borrower', 'rest-json', config),
      },
      Date.now(),
    );
    const { ended, reasons } = await runToEnd('borrower');

    expect(ended.state).toBe('failed');
    expect(reasons).toContain(`may not be sent to ${attacker.url}`);
    expect(attacker.saw(ORG_TOKEN)).toBe(false);
  });

  it("a source row rewritten with StartRun's permissions (no API signature) fails the run before any secret is read", async () => {
    // What a role that may write Sources items but not use the signing key can do: rewrite the config.
    await putSource(engine.deps, 'victim', 'rest-json', restConfig(attacker.url));
    const { ended } = await runToEnd('victim');

    expect(ended.state).toBe('failed');
    expect(ended.failure).toMatchObject({ reason: 'config_unverified' });
    expect(attacker.saw(TOKEN)).toBe(false);
    await call('PUT', '/sources/victim', { connector: 'rest-json', config: restConfig(owner.url) });
  });

  it('a forged dead-letter scope: retrying failed pages never sends the secret with a config the API did not sign', async () => {
    await call('PUT', '/secret-bindings/scoped', {
      bindings: { 'ssm:/harvester/scoped/token': [owner.url] },
    });
    values['ssm:/harvester/scoped/token'] = 'tok-scoped-7777';
    const signed = restConfig(owner.url, 'ssm:/harvester/scoped/token');
    expect((await call('PUT', '/sources/scoped', { connector: 'rest-json', config: signed })).status).toBe(
      201,
    );
    // What a role that may write dead letters can do: file a page whose scope sends the token to
    // another path of the bound origin (on a shared host, another tenant's endpoint).
    await engine.deps.deadLetters.record({
      sourceId: 'scoped',
      kind: 'page',
      ref: '',
      errorClass: 'transient',
      reason: 'filed by hand',
      attempts: 1,
      runId: 'forged',
      page: 1,
      scope: {
        mode: 'full',
        since: null,
        connector: 'rest-json',
        config: { ...signed, url: `${owner.url}/tenant-b/echo` },
      },
      now: Date.now() - 60_000,
    });

    // … and one the worker filed under an earlier config of the source, which the API signed.
    const earlier = { ...signed, url: `${owner.url}/records-v1` };
    await engine.deps.deadLetters.record({
      sourceId: 'scoped',
      kind: 'page',
      ref: 'c2',
      errorClass: 'transient',
      reason: 'HTTP 503',
      attempts: 1,
      runId: 'earlier',
      page: 2,
      scope: {
        mode: 'full',
        since: null,
        connector: 'rest-json',
        config: earlier,
        configMac: await engine.deps.trust.signConfig('scoped', 'rest-json', earlier),
      },
      now: Date.now() - 60_000,
    });

    const run = await startRun(engine.deps, { sourceId: 'scoped', mode: 'dlq_retry' });
    const ended = await waitForRun(engine.deps, run.runId);

    expect(ended.state).toBe('succeeded');
    expect(owner.paths.filter((path) => path.startsWith('/tenant-b'))).toEqual([]);
    expect(owner.paths.some((path) => path.startsWith('/records?'))).toBe(true); // with the source's config
    expect(owner.paths.some((path) => path === '/records-v1?limit=100&cursor=c2')).toBe(true); // a signed scope's
    expect(await engine.deps.deadLetters.listAll('scoped')).toEqual([]);
  });

  it('plain http with a secret in a stored row: never sent, even to the right host', async () => {
    const https = attacker.url.replace('http://127.0.0.1', 'https://plain.example');
    await call('PUT', '/secret-bindings/plain', { bindings: { 'ssm:/harvester/plain/token': [https] } });
    values['ssm:/harvester/plain/token'] = 'tok-plain-5555';
    // A signed row from before https was required with a secret, pointing at the same host over http.
    const config = restConfig(https.replace('https://', 'http://'), 'ssm:/harvester/plain/token');
    await engine.deps.sources.put(
      {
        sourceId: 'plain',
        connector: 'rest-json',
        config,
        schedules: [],
        configHash: stableHash({ connector: 'rest-json', config }),
        configMac: await engine.deps.trust.signConfig('plain', 'rest-json', config),
      },
      Date.now(),
    );

    const { ended, reasons } = await runToEnd('plain');

    expect(ended.state).toBe('failed');
    expect(reasons).toContain('may not be sent to http://plain.example');
    expect(attacker.saw('tok-plain-5555')).toBe(false);
  });
});

describe('a secret stored with trailing whitespace (`--value file://token.txt` keeps the newline)', () => {
  const WS_REF = 'ssm:/harvester/ws/token';
  const WS_TOKEN = 'tok-ws-0123456789';

  beforeAll(async () => {
    values[WS_REF] = `${WS_TOKEN}\n`;
    await call('PUT', '/secret-bindings/ws', { bindings: { [WS_REF]: [owner.url, attacker.url] } });
    expect(
      (await call('PUT', '/sources/ws', { connector: 'rest-json', config: restConfig(owner.url, WS_REF) }))
        .status,
    ).toBe(201);
  });

  it('a connection check shows it redacted, though the source echoes what went on the wire', async () => {
    const check = await call('POST', '/sources/ws/test');

    expect(check.json.ok).toBe(true);
    expect(owner.saw(`Bearer ${WS_TOKEN}`)).toBe(true); // sent trimmed, as Headers would anyway
    expect(JSON.stringify(check.json)).not.toContain(WS_TOKEN);
    expect(check.json.sample.data.headers.authorization).toBe('Bearer <redacted>');
  });

  it('is never sent to an origin the binding no longer holds', async () => {
    expect(
      (await call('PUT', '/sources/ws', { connector: 'rest-json', config: restConfig(attacker.url, WS_REF) }))
        .status,
    ).toBe(200);
    await call('PUT', '/secret-bindings/ws', { bindings: { [WS_REF]: [owner.url] } });

    const { ended, reasons } = await runToEnd('ws');

    expect(ended.state).toBe('failed');
    expect(reasons).toContain(`secret ${WS_REF} may not be sent to ${attacker.url}`);
    expect(attacker.saw(WS_TOKEN)).toBe(false);
  });
});

describe('a credential the source puts in its own next-page URL', () => {
  // S3 presigned URLs and some OAuth APIs answer with a next URL that carries `access_token` or
  // a signature: the worker must follow it as sent, and nobody may read it back.
  const SIGNED = 'SIGNED-NEXT-0001';
  const asked: string[] = [];
  let base = '';
  let stop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const server = createServer((request, response) => {
      asked.push(request.url ?? '');
      if (!request.url?.includes('page=2')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            data: [{ id: 'n-1', updatedAt: '2024-01-01T00:00:00.000Z' }],
            next: `${base}/records?page=2&access_token=${SIGNED}`,
          }),
        );
        return;
      }
      response.writeHead(400).end('bad page');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stop = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => stop());

  it('is followed as sent, and redacted in the run view and the dead letters', async () => {
    await call('PUT', '/sources/signed-next', {
      connector: 'rest-json',
      config: {
        url: `${base}/records`,
        itemsPath: 'data',
        idField: 'id',
        updatedAtField: 'updatedAt',
        pagination: { type: 'next-url', nextUrlPath: 'next' },
      },
    });

    const { ended } = await runToEnd('signed-next');
    const run = await call('GET', `/runs/${ended.runId}`);
    const letters = await call('GET', '/sources/signed-next/dead-letters');

    expect(asked.some((url) => url.includes(`access_token=${SIGNED}`))).toBe(true); // followed
    expect(ended.checkpoint?.cursor).toContain(SIGNED); // and keeps it to resume from
    expect(run.json.checkpoint.cursor).toBe(`${base}/records?page=2&access_token=<redacted>`);
    expect(letters.json.items).toHaveLength(1);
    expect(letters.json.items[0].ref).toBe(`${base}/records?page=2&access_token=<redacted>`);
    expect(JSON.stringify([run.json, letters.json])).not.toContain(SIGNED);
  });
});
