import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { secretSpellings } from '../../lib/connectors/secret-scrub.js';
import { startRun } from '../../lib/engine/index.js';
import { createLogger } from '../../lib/observability/logger.js';
import { apiOver, callApi } from '../support/api.js';
import { useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * A secret is never written down, tried with a bound host that turns hostile: it echoes the
 * request's headers into every record and error body, and puts the token it was sent into its
 * next-page URL under a parameter no name marks as a credential (`q=`). The token must show up in
 * nothing the run stores, answers, logs or publishes — checked by scanning every table of the
 * file, every API answer, every event on the bus and every log line the engine wrote.
 */

const TOKEN = 'ACME-SECRET-789';
const REF = 'ssm:/harvester/acme/token';

/** Everything a JSON text may hold of the token: raw, percent-, form- and base64-encoded. */
const SPELLINGS = secretSpellings(TOKEN);
const leaked = (text: string) => SPELLINGS.filter((spelling) => text.includes(spelling));

const { engine } = useEngineWithFakes('secret-scrub', {
  workers: 1,
  secrets: async (reference) => (reference === REF ? TOKEN : 'unknown'),
  logger: createLogger('DEBUG'),
  bootstrap: { changeFeed: true },
  runtime: { changeFeed: { includeData: true } },
});

let base = '';
let stopServer: () => Promise<void> = async () => {};
let api: ApiDeps;
let observer = '';
const asked: string[] = [];

/** The hostile host: page 1 echoes the headers and hands back the token in `q=`; page 2 fails echoing them. */
function answer(request: IncomingMessage, response: import('node:http').ServerResponse): void {
  asked.push(request.url ?? '');
  const sent = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
  if (request.url?.includes('page=2')) {
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'bad page', asked: request.url, headers: request.headers }));
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      data: [
        { id: 'e1', updatedAt: '2024-01-01T00:00:00.000Z', headers: request.headers, [sent]: sent },
        // No `updatedAt`: a dead letter whose excerpt holds the echoed headers.
        { id: 'bad-1', headers: request.headers },
      ],
      next: `${base}/records?page=2&q=${encodeURIComponent(sent)}`,
    }),
  );
}

beforeAll(async () => {
  const server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stopServer = () => new Promise((resolve) => server.close(() => resolve()));
  api = apiOver(engine);
  observer = await observeBus();
});
afterAll(() => stopServer());

/** A queue receiving every event the engine puts on its bus (entity changes and run outcomes). */
async function observeBus(): Promise<string> {
  const { sqs, events } = engine.aws.clients;
  const url = (await sqs.send(new CreateQueueCommand({ QueueName: `${engine.aws.prefix}-observer` })))
    .QueueUrl!;
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const rule = `${engine.aws.prefix}-all`;
  const bus = engine.aws.names.eventBus;
  await events.send(
    new PutRuleCommand({
      Name: rule,
      EventBusName: bus,
      EventPattern: JSON.stringify({ source: ['harvester'] }),
    }),
  );
  await events.send(
    new PutTargetsCommand({
      Rule: rule,
      EventBusName: bus,
      Targets: [{ Id: 'o', Arn: Attributes!.QueueArn! }],
    }),
  );
  return url;
}

/** Bus events until an `Entity Changed` and a run outcome arrived (or 60 s passed). */
async function busEvents(): Promise<string[]> {
  const bodies: string[] = [];
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: observer, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }),
    );
    bodies.push(...Messages.map((m) => m.Body ?? ''));
    const all = bodies.join('\n');
    if (all.includes('Entity Changed') && all.includes('Run Failed')) break;
  }
  return bodies;
}

/** Every item of every table of this file, as JSON. */
async function everyStoredItem(): Promise<string> {
  const { dynamo: dynamodb } = engine.aws.clients;
  const { TableNames = [] } = await dynamodb.send(new ListTablesCommand({}));
  const mine = TableNames.filter((name) => name.startsWith(engine.aws.prefix));
  const scans = await Promise.all(
    mine.map(async (TableName) =>
      JSON.stringify((await dynamodb.send(new ScanCommand({ TableName }))).Items),
    ),
  );
  return scans.join('\n');
}

describe('a bound source that echoes the token back', () => {
  it('finds it in no item, dead letter, checkpoint, run view, event, log line or API answer', async () => {
    const call = (method: string, url: string, body?: unknown) => callApi(api, method, url, body);
    expect((await call('PUT', '/secret-bindings/acme', { bindings: { [REF]: [base] } })).status).toBe(200);
    const config = {
      url: `${base}/records`,
      itemsPath: 'data',
      idField: 'id',
      updatedAtField: 'updatedAt',
      pagination: { type: 'next-url', nextUrlPath: 'next' },
      auth: { header: 'Authorization', prefix: 'Bearer ', secretRef: REF },
    };
    expect((await call('PUT', '/sources/acme', { connector: 'rest-json', config })).status).toBe(201);
    const lines: string[] = [];
    const capture = (chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    };
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    let ended: Awaited<ReturnType<typeof waitForRun>>;
    try {
      const run = await startRun(engine.deps, { sourceId: 'acme', mode: 'full' });
      ended = await waitForRun(engine.deps, run.runId);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    const item = await call('GET', '/sources/acme/items/e1');
    const letters = await call('GET', '/sources/acme/dead-letters');
    const entries = await Promise.all(
      (letters.json.items as { entryId: string }[]).map((entry) =>
        call('GET', `/sources/acme/dead-letters/${encodeURIComponent(entry.entryId)}`),
      ),
    );
    const runs = await call('GET', '/sources/acme/runs');
    const check = await call('POST', '/sources/acme/test');
    const events = await busEvents();
    const stored = await everyStoredItem();

    // The host did echo it and did put it in its next URL: the scrubbing had something to do …
    expect(asked.some((url) => url.includes('page=2&q='))).toBe(true);
    expect(item.json.data.headers.authorization).toBe('Bearer <redacted>');
    expect(ended.state).toBe('failed');
    expect(ended.checkpoint?.cursor).toMatch(/\?page=2&q=(<redacted>|%3Credacted%3E)$/);
    const page = (letters.json.items as { kind: string; entryId: string; ref: string }[]).find(
      (e) => e.kind === 'page',
    );
    expect(page?.entryId).toMatch(/^page#sha256:[0-9a-f]{64}$/);
    expect(page?.ref).toContain('q=');
    expect(letters.json.items.some((e: { kind: string }) => e.kind === 'item')).toBe(true);
    expect(events.some((e) => e.includes('e1'))).toBe(true);
    expect(lines.some((line) => line.includes('page dead-lettered'))).toBe(true);
    // … and nothing kept it.
    expect(leaked(stored)).toEqual([]);
    expect(leaked(JSON.stringify([item.json, letters.json, entries.map((e) => e.json), runs.json]))).toEqual(
      [],
    );
    expect(leaked(JSON.stringify(check.json))).toEqual([]);
    expect(leaked(JSON.stringify(ended))).toEqual([]);
    expect(leaked(events.join('\n'))).toEqual([]);
    expect(leaked(lines.join(''))).toEqual([]);
  }, 120_000);
});
