import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { createLogger } from '../../lib/observability/logger.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';
import { putTrustedSource, setUpTestEngine, type TestEngine, waitForRun } from '../support/harness.js';
import { CONTRACT_SECRET } from './subjects.js';

/**
 * The contract's last clause through the whole engine: a source whose token is refused (401) and
 * throttled (429) runs with DEBUG logs, and the secret it sends appears in no log line, no dead
 * letter and no run failure. (S3 sources hold no secret: the worker's role reads the bucket.)
 */

let engine: TestEngine;
let fake: FakeSource;
const lines: string[] = [];

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return write(chunk as never, ...(rest as []));
    }) as never);
  }
  // Stray console output counts too (vitest routes console around process.stdout).
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  }
  engine = await setUpTestEngine('secretlog', {
    logger: createLogger('DEBUG'),
    secrets: async () => CONTRACT_SECRET,
  });
  engine.runtime({ workers: 1, reaperIntervalMs: 3_600_000 }).start();
  fake = await startFakeSource({ entities: 30, seed: 77, latencyMs: 0 });
});
afterAll(async () => {
  vi.restoreAllMocks();
  await engine.stop();
  await fake.stop();
});

const configs = (id: string): Record<string, [string, Record<string, unknown>]> => ({
  'github-issues': [
    'github-issues',
    { owner: 'octo', repo: 'secret', baseUrl: fake.url, perPage: 10, tokenRef: `ssm:/harvester/${id}/token` },
  ],
  'gitlab-issues': [
    'gitlab-issues',
    {
      project: 'acme/secret',
      baseUrl: `${fake.url}/api/v4`,
      perPage: 10,
      tokenRef: `ssm:/harvester/${id}/token`,
    },
  ],
  'rest-json': [
    'rest-json',
    fakeRestConfig(fake.url, { pageSize: 10, auth: { secretRef: `ssm:/harvester/${id}/token` } }),
  ],
});

describe.each(['github-issues', 'gitlab-issues', 'rest-json'])('%s keeps its secret out of logs', (name) => {
  it('a refused and a throttled run log, dead-letter and fail without the secret', async () => {
    const sourceId = `secret-${name}`;
    const [connector, config] = configs(sourceId)[name]!;
    await putTrustedSource(engine.deps, sourceId, connector, config);
    lines.length = 0;
    fake.control.setProfile({ rate429: 0.5, retryAfterSeconds: 1 });
    const throttled = await waitForRun(
      engine.deps,
      (await startRun(engine.deps, { sourceId, mode: 'full' })).runId,
    );
    fake.control.setProfile({ forceStatus: 401 });
    const refused = await waitForRun(
      engine.deps,
      (await startRun(engine.deps, { sourceId, mode: 'full' })).runId,
    );
    fake.control.setProfile('none');

    expect(throttled.state).toBe('succeeded');
    expect(refused.state).toBe('failed');
    const logged = lines.join('');
    expect(logged).toContain(sourceId);
    expect(logged).not.toContain(CONTRACT_SECRET);
    const deadLetters = JSON.stringify(await engine.deps.deadLetters.listAll(sourceId));
    expect(deadLetters).toMatch(/401/);
    expect(deadLetters).not.toContain(CONTRACT_SECRET);
    expect(JSON.stringify(refused)).not.toContain(CONTRACT_SECRET);
  });
});
