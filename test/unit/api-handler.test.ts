import { describe, expect, it, vi } from 'vitest';
import { CursorSigner, randomCursorKey } from '../../lib/api/cursors.js';
import type { ApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent, type PlainRequest } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { isJsonContentType, MAX_BODY_BYTES } from '../../lib/api/request.js';
import { rawSecretFields } from '../../lib/api/secret-guard.js';
import { runSummary, toRunView } from '../../lib/api/views.js';

/** Deps whose every store call fails loudly: these requests must be refused before any store is asked. */
const signer = new CursorSigner(randomCursorKey());

function stubDeps(overrides: Partial<Record<keyof ApiDeps, unknown>> = {}) {
  const logger = { error: vi.fn(), info: vi.fn(), warn: vi.fn(), debug: vi.fn() };
  const untouchable = new Proxy(
    {},
    { get: () => () => Promise.reject(new Error('store must not be called')) },
  );
  const deps = {
    sources: untouchable,
    runs: untouchable,
    lifecycle: untouchable,
    deadLetters: untouchable,
    schedules: untouchable,
    cursors: signer,
    clock: { now: () => 0 },
    logger,
    ...overrides,
  } as unknown as ApiDeps;
  return { deps, logger };
}

async function answer(request: PlainRequest, deps = stubDeps().deps) {
  const res = await handleApiRequest(apiGatewayEvent(request), deps);
  return { status: res.statusCode, headers: res.headers ?? {}, json: JSON.parse(res.body ?? 'null') };
}

const JSON_HEADERS = { 'content-type': 'application/json' };

describe('handleApiRequest before any store is asked', () => {
  it.each(['GET', 'DELETE'])(
    'refuses a percent-encoded source id (%s /sources/%%76ictim) instead of decoding it to a path IAM never saw',
    async (method) => {
      const res = await answer({ method, url: '/sources/%76ictim' });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.json)).toContain('without percent-encoding');
      // The same id written plainly reaches the store (stubbed to fail): not refused before it.
      expect((await answer({ method, url: '/sources/victim' })).status).toBe(500);
    },
  );

  it('refuses a body over 64 KB with 413, even when it is valid JSON', async () => {
    const body = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES) });
    const res = await answer({ method: 'PUT', url: '/sources/a', headers: JSON_HEADERS, body });
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toBe('application/problem+json');
  });

  it('accepts a body of exactly 64 KB as far as its size goes', async () => {
    const body = `{"mode":"full"${' '.repeat(MAX_BODY_BYTES - 15)}}`;
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    const res = await answer({ method: 'POST', url: '/sources/a/runs', headers: JSON_HEADERS, body });
    expect(res.status).toBe(500); // reached the (failing) store: not refused for its size
  });

  it('refuses a body without a JSON content type with 415', async () => {
    const res = await answer({
      method: 'PUT',
      url: '/sources/a',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(res.status).toBe(415);
    expect(res.json.detail).toContain('text/plain');
  });

  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON', true],
    ['application/merge-patch+json', true],
    ['text/json', false],
    ['application/x-www-form-urlencoded', false],
  ])('treats %s as JSON: %s', (type, json) => {
    expect(isJsonContentType(type)).toBe(json);
  });

  it('answers 405 with Allow for a known path and an unknown method', async () => {
    const res = await answer({ method: 'DELETE', url: '/runs/01J9ZQ4T7J8Y2K3M4N5P6Q7R8S' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });

  it('answers 404 for an unknown path', async () => {
    expect((await answer({ method: 'GET', url: '/nothing/here' })).status).toBe(404);
  });
});

describe('unexpected errors', () => {
  it('are answered 500 with a generic detail quoting the request id, and logged in full', async () => {
    const failing = { require: () => Promise.reject(new Error('dynamo exploded at table secret-name')) };
    const { deps, logger } = stubDeps({ sources: failing });
    const res = await answer({ method: 'GET', url: '/sources/a', requestId: 'req-42' }, deps);
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ status: 500, title: 'Internal Server Error', requestId: 'req-42' });
    expect(res.json.detail).toContain('req-42');
    expect(JSON.stringify(res.json)).not.toContain('secret-name');
    expect(logger.error).toHaveBeenCalledWith(
      'request failed',
      expect.objectContaining({
        requestId: 'req-42',
        error: expect.objectContaining({ message: expect.stringContaining('secret-name') }),
      }),
    );
  });

  it('are not logged as errors when the status is below 500', async () => {
    const { deps, logger } = stubDeps();
    await answer({ method: 'GET', url: '/nothing' }, deps);
    expect(logger.error).not.toHaveBeenCalled();
  });
});

describe('cursors', () => {
  const refusing = {
    list: () =>
      Promise.reject(
        Object.assign(new Error('The provided starting key is invalid'), { name: 'ValidationException' }),
      ),
  };

  it('answers 400 naming the cursor when DynamoDB refuses a given cursor', async () => {
    const { deps } = stubDeps({ sources: refusing });
    const cursor = await signer.seal('sources', Buffer.from('{"other":"key"}').toString('base64url'));
    const res = await answer({ method: 'GET', url: `/sources?cursor=${cursor}` }, deps);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: 'cursor', message: 'is not a valid cursor' }]);
  });

  it('answers 500 for the same refusal without a cursor', async () => {
    const { deps } = stubDeps({ sources: refusing });
    expect((await answer({ method: 'GET', url: '/sources' }, deps)).status).toBe(500);
  });
});

describe('rawSecretFields', () => {
  it.each([
    [{ tokenRef: `ghp_${'A'.repeat(36)}` }, ['tokenRef']],
    [{ auth: { secretRef: 'Bearer abcdefghijklmnop' } }, ['auth.secretRef']],
    [{ extraQuery: { api_key: 'k' } }, ['extraQuery.api_key']],
    [{ url: 'https://user:pw@example.com/x' }, ['url']],
    [{ url: 'https://example.com/x?access_token=abc' }, ['url']],
    [
      {
        tokenRef: '/harvester/github-token',
        auth: { secretRef: 'secretsmanager:acme/key', prefix: 'Bearer ' },
      },
      [],
    ],
    [{ url: 'https://example.com/records?format=json', extraQuery: { format: 'json' } }, []],
  ])('finds raw credentials in %j at %j', (config, paths) => {
    expect(rawSecretFields(config).map((e) => e.path)).toEqual(paths);
  });
});

describe('runSummary', () => {
  const full = { mode: 'full' as const };
  it.each([
    [
      { ...full, state: 'running' as const, progress: { processed: 1990, total: 2100, pages: 20 } },
      10,
      '1990/~2100 processed, 10 in DLQ',
    ],
    [
      { ...full, state: 'running' as const, progress: { processed: 40, total: null, pages: 1 } },
      0,
      '40 processed, 0 in DLQ',
    ],
    // A finished run stored before outcomes were kept reports what it counts now, and says so.
    [
      { ...full, state: 'succeeded' as const, progress: { processed: 2010, total: 2100, pages: 21 } },
      1,
      '2010 processed, 1 in DLQ (live count: the run ended before outcomes were kept)',
    ],
    [
      {
        mode: 'reconciliation' as const,
        state: 'succeeded' as const,
        progress: { processed: 5, total: null, pages: 1 },
        tombstoned: 2,
      },
      0,
      '5 processed, 0 in DLQ, 2 tombstoned (live count: the run ended before outcomes were kept)',
    ],
    [
      {
        mode: 'dlq_retry' as const,
        state: 'succeeded' as const,
        progress: { processed: 0, total: null, pages: 1 },
      },
      3,
      'fixed nothing: 3 still failing in DLQ (live count: the run ended before outcomes were kept)',
    ],
    [
      {
        mode: 'dlq_retry' as const,
        state: 'succeeded' as const,
        progress: { processed: 4, total: null, pages: 1 },
      },
      1,
      'recovered 4, 1 still failing in DLQ (live count: the run ended before outcomes were kept)',
    ],
    [
      {
        mode: 'dlq_retry' as const,
        state: 'succeeded' as const,
        progress: { processed: 0, total: null, pages: 1 },
      },
      0,
      'nothing to retry: no open dead letters',
    ],
    // Entries resolved as gone stored nothing, yet the run did resolve them.
    [
      {
        mode: 'dlq_retry' as const,
        state: 'succeeded' as const,
        progress: { processed: 0, total: null, pages: 1, gone: 2 },
      },
      1,
      'recovered 0, 2 gone from the source, 1 still failing in DLQ (live count: the run ended before outcomes were kept)',
    ],
  ])('summarizes %j with %i open dead letters', (run, open, text) => {
    expect(runSummary(run, open)).toBe(text);
  });
});

describe('toRunView', () => {
  const base = {
    runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S',
    sourceId: 's',
    mode: 'full' as const,
    trigger: 'cli' as const,
    params: {},
    paramsHash: 'h',
    epoch: 1,
    nextPage: 2,
    checkpoint: null,
    progress: { processed: 10, total: 20, pages: 1 },
    errorCount: 0,
    heartbeatAt: 50_000,
    deferredUntil: null,
    restarts: 0,
    resume: { reason: 'resumed' as const, from: 'checkpoint' as const, at: 0 },
    failure: null,
    createdAt: 0,
    startedAt: 10_000,
    finishedAt: null,
    updatedAt: 0,
    handoff: null,
    outboxAt: null,
  };

  it('shows the heartbeat while running, with a duration so far, the trigger and the verdict in words', () => {
    const view = toRunView({ ...base, state: 'running' }, 70_000, 2);
    expect(view).toMatchObject({
      heartbeatAgeSeconds: 20,
      durationSeconds: 60,
      trigger: 'cli',
      openDeadLetters: 2,
      verdict: 'resumed from its last checkpoint after its worker went silent',
      progress: { total: 20, totalIsEstimate: true },
    });
  });

  it('says how many a reconciliation tombstoned, 0 included, and only for reconciliation', () => {
    const finished = { ...base, state: 'succeeded' as const, finishedAt: 20_000 };
    const reconciled = toRunView(
      { ...finished, mode: 'reconciliation', progress: { ...base.progress, tombstoned: 3 } },
      0,
      0,
    );
    expect(reconciled.tombstoned).toBe(3);
    expect(reconciled.summary).toBe(
      '10 processed, 0 in DLQ, 3 tombstoned (live count: the run ended before outcomes were kept)',
    );
    expect(toRunView({ ...finished, mode: 'reconciliation' }, 0, 0).summary).toContain('0 tombstoned');
    expect(toRunView(finished, 0, 0).tombstoned).toBeUndefined();
  });

  it('hides the heartbeat once finished, and the duration stops at the end', () => {
    const view = toRunView({ ...base, state: 'succeeded', finishedAt: 130_000 }, 999_000, 0);
    expect(view).toMatchObject({ heartbeatAt: null, heartbeatAgeSeconds: null, durationSeconds: 120 });
    expect(view.progress.totalIsEstimate).toBe(false);
  });
});
