import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { createLogger } from '../../lib/observability/logger.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { putTrustedSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';
import { CONTRACT_SECRET } from './subjects.js';

/**
 * The contract's last clause through the whole engine: a source whose token is refused (401) and
 * throttled (429) runs with DEBUG logs, and the secret it sends appears in no log line, no dead
 * letter and no run failure. (S3 sources hold no secret: the worker's role reads the bucket.)
 */

const lines: string[] = [];

// Registered before the engine's hooks: the capture starts before the engine and ends after it.
beforeAll(() => {
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
});
afterAll(() => {
  vi.restoreAllMocks();
});

const { engine, startFake } = useEngineWithFakes('secretlog', {
  logger: createLogger('DEBUG'),
  secrets: async () => CONTRACT_SECRET,
  workers: 1,
});
let fake: FakeSource;

beforeAll(async () => {
  fake = await startFake({ entities: 30, seed: 77, latencyMs: 0 });
});

/** The listing each connector reads, its token a secret reference of the source's own. */
const shapes = { 'github-issues': 'github', 'gitlab-issues': 'gitlab', 'rest-json': 'rest-cursor' } as const;
const tokenConfig = (name: keyof typeof shapes, id: string): Record<string, unknown> => {
  const ref = `ssm:/harvester/${id}/token`;
  if (name === 'github-issues') return { repo: 'secret', tokenRef: ref };
  if (name === 'gitlab-issues') return { project: 'acme/secret', tokenRef: ref };
  return { auth: { secretRef: ref } };
};

describe.each(Object.keys(shapes) as (keyof typeof shapes)[])('%s keeps its secret out of logs', (name) => {
  it('a refused and a throttled run log, dead-letter and fail without the secret', async () => {
    const sourceId = `secret-${name}`;
    const { connector, config } = sourceOfShape(fake, shapes[name], {
      pageSize: 10,
      config: tokenConfig(name, sourceId),
    });
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
