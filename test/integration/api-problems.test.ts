import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import type { Route } from '../../lib/api/route.js';
import { API_ROUTES } from '../../lib/api/routes/index.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/**
 * Bad input through the real handler: every refusal has the right status, a problem+json body
 * that names the problem, and leaves stored state (sources, runs, schedules) exactly as it was.
 */

let aws: TestAws;
let deps: ApiDeps;
const SOURCE = 'steady-source';
let activeRunId: string;

const REST_CONFIG = {
  url: 'http://127.0.0.1:9/records',
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
};

interface Req {
  method: string;
  url: string;
  body?: string;
  contentType?: string;
}

/** Every status the live handler answered in this file, to hold the OpenAPI document to. */
const observed: { method: string; url: string; status: number }[] = [];

async function send(req: Req) {
  const event = apiGatewayEvent({
    method: req.method,
    url: req.url,
    ...(req.body === undefined ? {} : { body: req.body }),
    headers: { 'content-type': req.contentType ?? 'application/json' },
  });
  const res = await handleApiRequest(event, deps);
  observed.push({ method: req.method, url: req.url, status: res.statusCode ?? 0 });
  return {
    status: res.statusCode,
    headers: res.headers ?? {},
    json: res.body ? JSON.parse(res.body) : undefined,
  };
}

/** Everything a bad request must not change: every stored source and run, and every schedule. */
async function storedState(): Promise<unknown> {
  const scan = async (table: string) =>
    ((await aws.clients.doc.send(new ScanCommand({ TableName: table }))).Items ?? []).sort((a, b) =>
      JSON.stringify(a).localeCompare(JSON.stringify(b)),
    );
  const schedules = await deps.schedules.names(SOURCE);
  return {
    sources: await scan(aws.names.sourcesTable),
    runs: await scan(aws.names.syncRunsTable),
    schedules,
  };
}

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('api-problems'));
  const put = await send({
    method: 'PUT',
    url: `/sources/${SOURCE}`,
    body: JSON.stringify({
      connector: 'rest-json',
      config: REST_CONFIG,
      schedules: [{ expression: 'rate(1 hour)', mode: 'incremental' }],
    }),
  });
  expect(put.status).toBe(201);
  activeRunId = (await send({ method: 'POST', url: `/sources/${SOURCE}/runs`, body: '{"mode":"full"}' })).json
    .runId;
});
afterAll(() => destroyAwsClients(aws.clients));

const put = (body: unknown): Req => ({
  method: 'PUT',
  url: `/sources/${SOURCE}`,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
const valid = { connector: 'rest-json', config: REST_CONFIG };

interface Case {
  name: string;
  req: Req;
  status: number;
  title: string;
  errors?: string[];
  extra?: Record<string, unknown>;
}

const CASES: Case[] = [
  { name: 'malformed JSON', req: put('{"connector": "rest-json",'), status: 400, title: 'Malformed JSON' },
  {
    name: 'an unknown top-level field',
    req: put({ ...valid, owner: 'me' }),
    status: 400,
    title: 'Invalid request',
    errors: ['owner'],
  },
  {
    name: 'wrong types',
    req: put({ connector: 7, config: [], schedules: 'hourly' }),
    status: 400,
    title: 'Invalid request',
    errors: ['connector', 'config', 'schedules'],
  },
  {
    name: 'a missing body',
    req: { method: 'PUT', url: `/sources/${SOURCE}` },
    status: 400,
    title: 'Invalid request',
    errors: [''],
  },
  {
    name: 'an unknown connector',
    req: put({ ...valid, connector: 'gitlab' }),
    status: 400,
    title: 'Unknown connector',
    errors: ['connector'],
    extra: { knownConnectors: ['github-issues', 'gitlab-issues', 'rest-json', 's3-objects'] },
  },
  {
    name: 'an invalid connector config',
    req: put({
      ...valid,
      config: {
        ...REST_CONFIG,
        url: 'ftp://x',
        pagination: { type: 'cursor', cursorParam: '' },
        pagesize: 5,
      },
    }),
    status: 400,
    title: 'Invalid connector config',
    errors: [
      'config.url',
      'config.pagination.cursorParam',
      'config.pagination.nextCursorPath',
      'config.pagesize',
    ],
  },
  {
    name: 'a raw token where a secret reference belongs',
    req: put({ ...valid, config: { ...REST_CONFIG, auth: { secretRef: `ghp_${'a'.repeat(36)}` } } }),
    status: 400,
    title: 'Raw secret in config',
    errors: ['config.auth.secretRef'],
  },
  {
    name: 'an invalid schedule expression',
    req: put({
      ...valid,
      schedules: [
        { expression: 'every hour', mode: 'full' },
        { expression: 'rate(1 hours)', mode: 'full' },
      ],
    }),
    status: 400,
    title: 'Invalid request',
    errors: ['schedules.0.expression', 'schedules.1.expression'],
  },
  {
    name: 'an invalid source id',
    req: { method: 'PUT', url: '/sources/Not_Valid!', body: JSON.stringify(valid) },
    status: 400,
    title: 'Invalid request',
    errors: ['sourceId'],
  },
  {
    name: 'a body over 64 KB',
    req: put({ ...valid, config: { ...REST_CONFIG, extraQuery: { pad: 'x'.repeat(70_000) } } }),
    status: 413,
    title: 'Content Too Large',
  },
  {
    name: 'a non-JSON content type',
    req: { ...put(valid), contentType: 'application/x-www-form-urlencoded' },
    status: 415,
    title: 'Unsupported Media Type',
  },
  {
    name: 'a second start while a run is active',
    req: { method: 'POST', url: `/sources/${SOURCE}/runs`, body: '{"mode":"incremental"}' },
    status: 409,
    title: 'Source busy',
  },
  {
    name: 'an unknown run mode',
    req: { method: 'POST', url: `/sources/${SOURCE}/runs`, body: '{"mode":"everything"}' },
    status: 400,
    title: 'Invalid request',
    errors: ['mode'],
  },
  {
    name: 'a start on an unknown source',
    req: { method: 'POST', url: '/sources/nobody/runs', body: '{"mode":"full"}' },
    status: 404,
    title: 'Source not found',
  },
  {
    name: 'an unknown source',
    req: { method: 'GET', url: '/sources/nobody' },
    status: 404,
    title: 'Source not found',
  },
  {
    name: 'an unknown run',
    req: { method: 'GET', url: `/runs/${ulid()}` },
    status: 404,
    title: 'Run not found',
  },
  {
    name: 'cancelling an unknown run',
    req: { method: 'POST', url: `/runs/${ulid()}/cancel` },
    status: 404,
    title: 'Run not found',
  },
  {
    name: 'a malformed run id',
    req: { method: 'GET', url: '/runs/42' },
    status: 400,
    title: 'Invalid request',
    errors: ['runId'],
  },
  {
    name: 'dead letters of an unknown source',
    req: { method: 'GET', url: '/sources/nobody/dead-letters' },
    status: 404,
    title: 'Source not found',
  },
  {
    name: 'bad list parameters',
    req: { method: 'GET', url: `/sources/${SOURCE}/dead-letters?limit=0&errorClass=fatal&sort=asc` },
    status: 400,
    title: 'Invalid request',
    errors: ['errorClass', 'limit', 'sort'],
  },
  {
    name: 'a forged cursor',
    req: { method: 'GET', url: '/sources?cursor=not-a-cursor' },
    status: 400,
    title: 'Invalid request',
    errors: ['cursor'],
  },
  { name: 'an unknown route', req: { method: 'GET', url: '/things' }, status: 404, title: 'Not Found' },
  {
    name: 'a wrong method',
    req: { method: 'PATCH', url: `/sources/${SOURCE}` },
    status: 405,
    title: 'Method Not Allowed',
  },
  {
    name: 'a lone surrogate in a config value',
    req: put({ ...valid, config: { ...REST_CONFIG, idField: '\ud800' } }),
    status: 400,
    title: 'Invalid request',
    errors: ['config.idField'],
  },
  {
    name: 'a lone surrogate in a field name',
    req: put(`{"connector":"rest-json","config":{"\\udc00":"x"}}`),
    status: 400,
    title: 'Invalid request',
    errors: ['config.\udc00'],
  },
  {
    name: 'a __proto__ key inside a config map',
    req: put(`{"connector":"rest-json","config":{"extraQuery":{"__proto__":{"polluted":"yes"}}}}`),
    status: 400,
    title: 'Invalid request',
    errors: ['config.extraQuery.__proto__'],
  },
  {
    name: 'a __proto__ key at the top',
    req: put(`{"__proto__":{"admin":true},"connector":"rest-json","config":{}}`),
    status: 400,
    title: 'Invalid request',
    errors: ['__proto__'],
  },
  {
    name: 'a 60 KB id field',
    req: put({ ...valid, config: { ...REST_CONFIG, idField: 'x'.repeat(60_000) } }),
    status: 400,
    title: 'Invalid request',
    errors: ['config.idField'],
  },
  {
    name: 'nesting deeper than any config needs',
    req: put({
      ...valid,
      config: { ...REST_CONFIG, extraQuery: JSON.parse(`${'{"a":'.repeat(10)}1${'}'.repeat(10)}`) },
    }),
    status: 400,
    title: 'Invalid request',
  },
  {
    name: 'a cron expression out of range',
    req: put({ ...valid, schedules: [{ expression: 'cron(99 99 * * ? *)', mode: 'full' }] }),
    status: 400,
    title: 'Invalid request',
    errors: ['schedules.0.expression'],
  },
  {
    name: 'a rate beyond any sensible period',
    req: put({ ...valid, schedules: [{ expression: 'rate(99999999999999999999 minutes)', mode: 'full' }] }),
    status: 400,
    title: 'Invalid request',
    errors: ['schedules.0.expression'],
  },
  {
    name: 'schedules given as a string',
    req: put({ ...valid, schedules: 'rate(1 hour)' }),
    status: 400,
    title: 'Invalid request',
    errors: ['schedules'],
  },
  {
    name: 'a schedule edit without schedules',
    req: { method: 'PUT', url: `/sources/${SOURCE}/schedules`, body: '{}' },
    status: 400,
    title: 'Invalid request',
    errors: ['schedules'],
  },
  {
    name: 'a schedule edit with an invalid cron',
    req: {
      method: 'PUT',
      url: `/sources/${SOURCE}/schedules`,
      body: JSON.stringify({ schedules: [{ expression: 'cron(0 3 * * * *)', mode: 'full' }] }),
    },
    status: 400,
    title: 'Invalid request',
    errors: ['schedules.0.expression'],
  },
  {
    name: 'a schedule edit of an unknown source',
    req: { method: 'PUT', url: '/sources/nobody/schedules', body: '{"schedules":[]}' },
    status: 404,
    title: 'Source not found',
  },
  {
    name: 'an unsigned raw DynamoDB key as cursor',
    req: {
      method: 'GET',
      url: `/sources/${SOURCE}/runs?cursor=${Buffer.from(JSON.stringify({ sourceId: SOURCE, runId: 'x', createdAt: 1 })).toString('base64url')}`,
    },
    status: 400,
    title: 'Invalid request',
    errors: ['cursor'],
  },
  {
    name: 'a percent-escaped lone surrogate in the path',
    req: { method: 'GET', url: '/sources/%ED%A0%80' },
    status: 400,
    title: 'Invalid request',
    errors: ['sourceId'],
  },
  {
    name: 'a body on a GET',
    req: { method: 'GET', url: '/sources', body: '{}' },
    status: 400,
    title: 'Invalid request',
  },
];

/** A route's path with its parameters filled: the test's source, a fresh run id, an entry id. */
function urlOf(route: Route): string {
  return route.path
    .replace('{sourceId}', SOURCE)
    .replace('{runId}', activeRunId ?? ulid())
    .replace('{entryId}', encodeURIComponent('item#e-1'));
}

/** Every route of the API, each fed input no route may accept, with the status it must answer. */
function hostileCases(): Case[] {
  return API_ROUTES.flatMap((route): Case[] => {
    const url = urlOf(route);
    const name = `${route.method} ${route.path}`;
    const cases: Case[] = [];
    if (route.body) {
      const big = JSON.stringify({ pad: 'x'.repeat(70_000) });
      cases.push(
        {
          name: `${name}: a body over 64 KB`,
          req: { method: route.method, url, body: big },
          status: 413,
          title: 'Content Too Large',
        },
        {
          name: `${name}: text/plain`,
          req: { method: route.method, url, body: '{}', contentType: 'text/plain' },
          status: 415,
          title: 'Unsupported Media Type',
        },
        {
          name: `${name}: malformed JSON`,
          req: { method: route.method, url, body: '{"' },
          status: 400,
          title: 'Malformed JSON',
        },
        {
          name: `${name}: a __proto__ key`,
          req: { method: route.method, url, body: '{"__proto__":{"x":1}}' },
          status: 400,
          title: 'Invalid request',
          errors: ['__proto__'],
        },
        {
          name: `${name}: a lone surrogate`,
          req: { method: route.method, url, body: '{"mode":"\\ud800"}' },
          status: 400,
          title: 'Invalid request',
        },
        {
          name: `${name}: a JSON array`,
          req: { method: route.method, url, body: '[]' },
          status: 400,
          title: 'Invalid request',
        },
      );
    } else {
      cases.push({
        name: `${name}: a body it does not take`,
        req: { method: route.method, url, body: '{"a":1}' },
        status: 400,
        title: 'Invalid request',
      });
    }
    cases.push({
      name: `${name}: an unknown query parameter`,
      req: { method: route.method, url: `${url}?debug=1`, ...(route.body ? { body: '{}' } : {}) },
      status: 400,
      title: 'Invalid request',
      errors: ['debug'],
    });
    if (
      route.query &&
      route.method === 'GET' &&
      'cursor' in (route.query as unknown as { shape: object }).shape
    ) {
      cases.push({
        name: `${name}: a forged cursor`,
        req: { method: 'GET', url: `${url}?cursor=v1.eyJhIjoxfQ.AAAA` },
        status: 400,
        title: 'Invalid request',
        errors: ['cursor'],
      });
    }
    return cases;
  });
}

describe('every route refuses hostile input', () => {
  it('covers every route', () => {
    const covered = new Set(hostileCases().map((c) => c.name.split(':')[0]));
    expect([...covered].sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it.each(hostileCases())('$name answers $status with problem+json, and changes nothing', async (c) => {
    const before = await storedState();
    const res = await send(c.req);
    expect(res.status).toBe(c.status);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json).toMatchObject({ status: c.status, title: c.title });
    if (c.errors) expect(res.json.errors.map((e: { path: string }) => e.path)).toEqual(c.errors);
    expect(await storedState()).toEqual(before);
  });
});

describe('signed cursors', () => {
  it('a real cursor pages on; altered, or sent to another listing, it answers 400', async () => {
    for (const id of ['cur-a', 'cur-b', 'cur-c'])
      await send({ method: 'PUT', url: `/sources/${id}`, body: JSON.stringify(valid) });
    const first = await send({ method: 'GET', url: '/sources?limit=1' });
    const cursor: string = first.json.nextCursor;
    expect(cursor).toMatch(/^v1\./);
    expect((await send({ method: 'GET', url: `/sources?limit=1&cursor=${cursor}` })).status).toBe(200);

    const payload = cursor.split('.')[1]!;
    const forgedKey = Buffer.from(JSON.stringify({ sourceId: 'zzz' })).toString('base64url');
    for (const bad of [
      cursor.replace(payload, forgedKey),
      `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`,
      payload,
    ]) {
      const res = await send({ method: 'GET', url: `/sources?limit=1&cursor=${bad}` });
      expect(res.status).toBe(400);
      expect(res.json.errors).toEqual([{ path: 'cursor', message: 'is not a valid cursor' }]);
    }
    const elsewhere = await send({ method: 'GET', url: `/sources/${SOURCE}/runs?cursor=${cursor}` });
    expect(elsewhere.status).toBe(400);
    const deadLetters = await send({
      method: 'GET',
      url: `/sources/${SOURCE}/dead-letters?cursor=${cursor}`,
    });
    expect(deadLetters.status).toBe(400);
  });
});

describe('bad input', () => {
  it.each(CASES)('$name answers $status with a problem naming it, and changes nothing', async (c) => {
    const before = await storedState();
    const res = await send(c.req);
    expect(res.status).toBe(c.status);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json).toMatchObject({
      status: c.status,
      title: c.title,
      instance: new URL(c.req.url, 'http://x').pathname,
    });
    expect(res.json.detail).toEqual(expect.any(String));
    expect(res.json.requestId).toEqual(expect.any(String));
    if (c.errors) expect(res.json.errors.map((e: { path: string }) => e.path)).toEqual(c.errors);
    if (c.extra) expect(res.json).toMatchObject(c.extra);
    expect(await storedState()).toEqual(before);
  });

  it('the 409 of a busy source names the active run', async () => {
    const res = await send({ method: 'POST', url: `/sources/${SOURCE}/runs`, body: '{"mode":"full"}' });
    expect(res.json.activeRunId).toBe(activeRunId);
    // Paste-able commands, not routes: wait for it or cancel it from the CLI.
    expect(res.json.detail).toContain(`(harvester runs watch ${activeRunId})`);
    expect(res.json.detail).toContain(`(harvester runs cancel ${activeRunId})`);
  });

  it('a 405 lists the allowed methods in Allow', async () => {
    const res = await send({ method: 'POST', url: `/sources/${SOURCE}` });
    expect(res.headers.allow).toBe('PUT, GET, DELETE');
    expect(res.json.allowed).toEqual(['PUT', 'GET', 'DELETE']);
  });

  it('cancelling a finished run answers 409 and leaves it as it was', async () => {
    const id = `done-${ulid().toLowerCase()}`;
    await send({ method: 'PUT', url: `/sources/${id}`, body: JSON.stringify(valid) });
    const run = (await send({ method: 'POST', url: `/sources/${id}/runs`, body: '{"mode":"full"}' })).json;
    await deps.runs.start(run.runId, 1, Date.now());
    await deps.lifecycle.finish({
      runId: run.runId,
      sourceId: id,
      epoch: 1,
      state: 'succeeded',
      now: Date.now(),
    });
    const res = await send({ method: 'POST', url: `/runs/${run.runId}/cancel` });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({
      title: 'Run already ended',
      detail: expect.stringContaining('succeeded'),
    });
    expect((await deps.runs.require(run.runId)).state).toBe('succeeded');
  });
});

describe('the OpenAPI document', () => {
  // Runs last: every status the handler answered above must be documented on its operation.
  it('documents every status the live handler answered in this file, and names servers', async () => {
    const doc = (await send({ method: 'GET', url: '/openapi.json' })).json;
    expect(doc.servers.length).toBeGreaterThan(0);
    expect(doc.servers[0].url).toMatch(/^https:\/\/.*execute-api/);
    const missing: string[] = [];
    const statuses = new Set<number>();
    for (const { method, url, status } of observed) {
      statuses.add(status);
      const path = new URL(url, 'http://x').pathname;
      const operations = API_ROUTES.filter((r) => matchesPath(r, path));
      if (operations.length === 0) continue; // 404 for a path no route has
      const own = operations.filter((r) => r.method === method.toUpperCase());
      for (const route of own.length > 0 ? own : operations) {
        const responses = doc.paths[route.path][route.method.toLowerCase()].responses;
        if (!(String(status) in responses)) missing.push(`${route.method} ${route.path} ${status}`);
      }
    }
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 201, 400, 404, 405, 409, 413, 415]));
    expect([...new Set(missing)]).toEqual([]);
  });
});

function matchesPath(route: Route, path: string): boolean {
  const pattern = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
  return new RegExp(`^${pattern}$`).test(path);
}
