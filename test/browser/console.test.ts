import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import { apiOver } from '../support/api.js';
import { captureIo } from '../support/cli-io.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * The web console in a real browser (Debian's Chromium, driven by playwright-core): against the
 * local dev server with the fake source, a run is started and watched to its end, its dead
 * letters discarded, an item explained; through `harvester console` every request reaches the
 * API SigV4-signed; a cross-site POST is refused; the page asks nothing of any other host.
 * CONSOLE_SCREENSHOTS=1 writes each view to docs/console/.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const SOURCE = 'console-src';
const REASON = 'broken upstream records, accepted';

const setup = useEngineWithFakes('console', { workers: 2 });
const { engine } = setup;
let server: DevServer;
let browser: Browser;
let page: Page;
const requested: string[] = [];

async function cli(...args: string[]) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', '--endpoint', server.url, ...args], io);
  return { code, stdout: io.stdout() };
}

/** Files `count` transient item dead letters (t-0, t-1, …) of another run, as a run's pages would. */
async function fileTransient(count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await engine.deps.deadLetters.record({
      sourceId: SOURCE,
      kind: 'item',
      ref: `t-${i}`,
      errorClass: 'transient',
      reason: 'HTTP 503 from the source',
      attempts: 3,
      runId: '01J00000000000000000000000',
      page: 1,
      now: Date.now(),
    });
}

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync('docs/console', { recursive: true });
  await page.screenshot({ path: `docs/console/${name}.png` });
}

/** Sends one raw request (headers a browser would set, which fetch may not let a test set). */
function raw(url: string, method: string, headers: Record<string, string>, body = '') {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    // The path goes out as written (new URL would resolve its dot segments first).
    const { hostname, port } = new URL(url);
    const path = url.replace(/^http:\/\/[^/]+/, '');
    const req = httpRequest({ hostname, port, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  const fake = await setup.startFake({
    entities: 240,
    seed: 35,
    profile: { invalidRecords: 15, latencyMs: 120 },
  });
  await putSource(engine.deps, SOURCE, 'rest-json', fakeRestConfig(fake.url, { pageSize: 20 }));
  server = await startDevServer({ deps: apiOver(engine) });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  page.on('request', (request) => requested.push(request.url()));
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the console against harvester local', () => {
  let runId = '';

  it('watches a run started from the page to its end, its figures those of runs get', async () => {
    await page.goto(`${server.url}/#/runs`);
    await page.getByLabel(`Mode for ${SOURCE}`).selectOption('full');
    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/^started \w+ \(full\)/);
    runId = /started (\w+)/.exec((await page.getByRole('status').textContent()) ?? '')![1]!;
    const row = page.locator(`tr[data-run="${runId}"]`);
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          seen.add((await row.locator('[data-field="progress"]').textContent()) ?? '');
          return row.locator('[data-field="state"]').textContent();
        },
        { timeout: 60_000, interval: 300 },
      )
      .toBe('succeeded');
    await shot('runs');

    const api = JSON.parse((await cli('runs', 'get', SOURCE, runId, '--json')).stdout);
    expect(api.state).toBe('succeeded');
    expect(await row.locator('[data-field="progress"]').textContent()).toBe(
      `${api.progress.processed} of ${api.progress.total}`,
    );
    expect(await row.locator('[data-field="deadLetters"]').textContent()).toBe(String(api.openDeadLetters));
    expect(api.openDeadLetters).toBe(15);
    // The figures moved while the page polled: more than the final one was on screen.
    expect(seen.size).toBeGreaterThan(1);
  });

  it('is reachable by keyboard: Tab reaches Start with a visible focus ring, which a poll does not take away', async () => {
    await page.goto(`${server.url}/#/runs`);
    await page.getByRole('button', { name: 'Start' }).waitFor();
    // Evaluated in the page as strings: the test's own types know no DOM.
    let focused = '';
    for (let i = 0; i < 12 && focused !== 'Start'; i++) {
      await page.keyboard.press('Tab');
      focused = String(await page.evaluate('document.activeElement?.textContent ?? ""'));
    }
    expect(focused).toBe('Start');
    const ring = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    expect(ring).not.toBe('none');
    await page.waitForTimeout(2_500);
    expect(await page.locator(':focus').textContent()).toBe('Start');
  });

  it("shows the run's fixed outcome, its story as a timeline (what `runs events` prints), and its dead letters", async () => {
    await page.goto(`${server.url}/#/run/${SOURCE}/${runId}`);
    const api = JSON.parse((await cli('runs', 'get', SOURCE, runId, '--json')).stdout);
    await expect
      .poll(() => page.locator('[data-field="outcome-processed"]').textContent())
      .toBe(String(api.outcome.processed));
    expect(await page.locator('[data-field="outcome-filed"]').textContent()).toBe('15');
    const story = JSON.parse((await cli('runs', 'events', SOURCE, runId, '--json')).stdout) as {
      items: { type: string; epoch: number }[];
    };
    expect(story.items[0]?.type).toBe('started');
    expect(story.items.at(-1)?.type).toBe('ended');
    await expect
      .poll(() =>
        page.locator('ol.timeline li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-event'))),
      )
      .toEqual(story.items.map((e) => e.type));
    expect(await page.locator('ol.timeline li').last().textContent()).toMatch(
      new RegExp(`ended epoch \\d+ state=succeeded · processed=${api.outcome.processed} · deadLetters=15`),
    );
    await shot('run');

    // A run that kept no story (it started before runs kept one) says so quietly.
    await page.route('**/events?*', (route) =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({ items: [], nextCursor: null, dropped: 0 }),
      }),
    );
    await page.reload();
    await expect.poll(() => page.locator('[data-field="events"]').textContent()).toBe('no events recorded');
    await page.unroute('**/events?*');
    expect(await page.locator('section[aria-label="Dead letters of this run"] tbody tr').count()).toBe(15);
  });

  it('discards the 15 dead letters in one action with a reason; the discarded listing says who, when, why', async () => {
    const before = Date.now();
    await page.goto(`${server.url}/#/dead-letters?source=${SOURCE}&runId=${runId}&errorClass=permanent`);
    await expect.poll(() => page.locator('tr[data-entry]').count()).toBe(15);
    await page
      .getByLabel(`select ${await page.locator('tr[data-entry]').first().getAttribute('data-entry')}`)
      .check();
    await page.getByRole('button', { name: 'Discard selected' }).waitFor();
    await shot('dead-letters');
    await page
      .getByLabel(`select ${await page.locator('tr[data-entry]').first().getAttribute('data-entry')}`)
      .uncheck();
    const first = (await page.locator('tr[data-entry]').first().getAttribute('data-entry'))!;
    await page.getByRole('button', { name: first, exact: true }).click();
    await expect.poll(() => page.locator('pre.json').textContent()).toContain('"history"');
    // The entry's heading takes the focus, so a keyboard user lands on what was opened.
    expect(await page.evaluate('document.activeElement?.textContent')).toBe(`Entry ${first}`);
    await page.getByLabel('Discard reason').fill(REASON);
    await page.getByRole('button', { name: 'Discard all matching the filter' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('discarded 15 dead letters');

    await page.goto(`${server.url}/#/dead-letters?source=${SOURCE}&state=discarded`);
    await expect.poll(() => page.locator('tr[data-entry]').count()).toBe(15);
    const whys = await page.locator('[data-field="discarded-why"]').allTextContents();
    const bys = await page.locator('[data-field="discarded-by"]').allTextContents();
    const ats = await page
      .locator('[data-field="discarded-at"] time')
      .evaluateAll((els) => els.map((el) => el.getAttribute('datetime')));
    expect(whys).toEqual(Array(15).fill(REASON));
    expect(bys).toEqual(Array(15).fill('no IAM identity (local)'));
    for (const at of ats) expect(Date.parse(at!)).toBeGreaterThanOrEqual(before - 1_000);
    await shot('dead-letters-discarded');
    const open = JSON.parse((await cli('dlq', 'list', SOURCE, '--json')).stdout).items;
    expect(open).toEqual([]);
  });

  it('discards the entries selected on the page, each with the reason given', async () => {
    await fileTransient(3);
    await page.goto(`${server.url}/#/dead-letters?source=${SOURCE}&errorClass=transient`);
    await expect.poll(() => page.locator('tr[data-entry]').count()).toBe(3);
    await page.getByRole('button', { name: 'Select all shown' }).click();
    await page.getByLabel('select item#t-1').uncheck();
    await page.getByLabel('Discard reason').fill('retried by hand');
    await page.getByRole('button', { name: 'Discard selected' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('discarded 2 dead letters');

    const open = JSON.parse((await cli('dlq', 'list', SOURCE, '--json')).stdout).items;
    const gone = JSON.parse(
      (await cli('dlq', 'list', SOURCE, '--state', 'discarded', '--error-class', 'transient', '--json'))
        .stdout,
    ).items;
    expect(open.map((e: { entryId: string }) => e.entryId)).toEqual(['item#t-1']);
    expect(gone.map((e: { discard: { reason: string } }) => e.discard.reason)).toEqual([
      'retried by hand',
      'retried by hand',
    ]);
  });

  it('retries the failed entries a filter matches: a dlq_retry run over that filter', async () => {
    await page.goto(`${server.url}/#/dead-letters?source=${SOURCE}&errorClass=transient`);
    await page.getByRole('button', { name: 'Retry matching' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/^retry run \w+ queued$/);
    const retryRun = /retry run (\w+)/.exec((await page.getByRole('status').textContent()) ?? '')![1]!;

    const api = JSON.parse((await cli('runs', 'get', SOURCE, retryRun, '--json')).stdout);
    expect(api).toMatchObject({ mode: 'dlq_retry', deadLetterFilter: { errorClass: 'transient' } });
    await waitForRun(engine.deps, retryRun);
  });

  it("explains an item with the API's own sentence", async () => {
    const items = JSON.parse((await cli('items', 'list', SOURCE, '--limit', '1', '--json')).stdout).items;
    const entityId = items[0].entityId as string;
    const explained = JSON.parse((await cli('items', 'explain', SOURCE, entityId, '--json')).stdout);
    await page.goto(`${server.url}/#/items`);
    await page.getByLabel('Entity id').fill(entityId);
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect.poll(() => page.locator('[data-field="explain"]').textContent()).toBe(explained.summary);
    await shot('items');
  });

  it('refuses a cross-site POST, and a POST from another port of this host', async () => {
    const url = `${server.url}/api/sources/${SOURCE}/runs`;
    const body = JSON.stringify({ mode: 'full' });
    const json = { 'content-type': 'application/json' };
    const crossSite = await raw(url, 'POST', { ...json, 'sec-fetch-site': 'cross-site' }, body);
    const foreign = await raw(url, 'POST', { ...json, origin: 'http://evil.example' }, body);
    const otherPort = await raw(url, 'POST', { ...json, origin: 'http://127.0.0.1:1' }, body);
    const own = await raw(
      `${server.url}/api/sources/nope/runs`,
      'POST',
      { ...json, origin: server.url },
      body,
    );

    expect([crossSite.status, foreign.status, otherPort.status]).toEqual([403, 403, 403]);
    expect(own.status).toBe(404);
  });
});

describe('harvester console --endpoint', () => {
  let recorder: Server;
  let child: ChildProcess;
  let consoleUrl = '';
  const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    // A stage-like API in front of the dev server: records each request as it arrives, forwards it.
    recorder = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      const forwarded = httpRequest(
        `${server.url}${(req.url ?? '').replace(/^\/prod/, '')}`,
        {
          method: req.method,
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? '' });
          answer.pipe(res);
        },
      );
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/prod`;
    child = spawn(process.execPath, ['bin/harvester.mjs', 'console', '--endpoint', endpoint, '--port', '0'], {
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: 'AKIDCONSOLETEST',
        AWS_SECRET_ACCESS_KEY: 'console-test-secret',
        AWS_SESSION_TOKEN: '',
        AWS_REGION: 'eu-west-1',
        AWS_PROFILE: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    consoleUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk) => {
        out += chunk;
        const match = /console at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`harvester console exited ${code}: ${out}`)));
    });
  }, 60_000);
  afterAll(async () => {
    child?.kill('SIGTERM');
    await new Promise<void>((resolve) => (recorder ? recorder.close(() => resolve()) : resolve()));
  });

  it('serves the same views, every proxied request signed with SigV4', async () => {
    await page.goto(`${consoleUrl}/#/runs`);
    await expect
      .poll(() => page.locator(`tr[data-source="${SOURCE}"]`).count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    await page.goto(`${consoleUrl}/#/dead-letters?source=${SOURCE}&state=discarded`);
    await expect.poll(() => page.locator('tr[data-entry]').count()).toBe(17);
    await page.evaluate(() =>
      fetch('/api/sources/nope/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"mode":"full"}',
      }),
    );

    expect(seen.map((r) => r.url)).toContain('/prod/sources');
    expect(seen.some((r) => r.method === 'POST' && r.url === '/prod/sources/nope/runs')).toBe(true);
    for (const r of seen) {
      expect(r.url.startsWith('/prod/')).toBe(true);
      expect(r.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDCONSOLETEST\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date/,
      );
      expect(r.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
      expect(r.headers.cookie).toBeUndefined();
    }
  });

  it('forwards nothing but /api/*, and refuses a POST that is not from its own page', async () => {
    const count = seen.length;
    const other = await raw(`${consoleUrl}/sources`, 'GET', {});
    const stepOut = await raw(`${consoleUrl}/api/../../other`, 'GET', {});
    const bare = await raw(
      `${consoleUrl}/api/sources/${SOURCE}/runs`,
      'POST',
      { 'content-type': 'application/json' },
      '{"mode":"full"}',
    );
    const crossSite = await raw(`${consoleUrl}/api/sources`, 'GET', { 'sec-fetch-site': 'cross-site' });
    const rebound = await raw(`${consoleUrl}/api/sources`, 'GET', { host: 'evil.example' });

    expect([other.status, stepOut.status, bare.status, crossSite.status, rebound.status]).toEqual([
      404, 400, 403, 403, 421,
    ]);
    expect(seen.length).toBe(count);
  });
});

describe('the page', () => {
  it('asked nothing of any host but 127.0.0.1', () => {
    expect(requested.length).toBeGreaterThan(20);
    const hosts = new Set(requested.map((url) => new URL(url).hostname));
    expect([...hosts]).toEqual(['127.0.0.1']);
  });
});
