import { describe, expect, it, vi } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { putTrustedSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * The worker enforces the source policy itself, whatever got into the Sources table (a config
 * written before the policy, or by hand): a secret of another source is never resolved, and a
 * metadata address is never contacted. Both end as dead-lettered pages with the reason.
 */

const secrets = vi.fn(async (reference: string) => `value-of-${reference}`);

const restConfig = (url: string, extra: Record<string, unknown> = {}) => ({
  url,
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
  itemPath: '',
  pageSize: 100,
  pageSizeParam: 'limit',
  ordered: false,
  extraQuery: {},
  ...extra,
});

async function runToEnd(sourceId: string, config: Record<string, unknown>) {
  await putTrustedSource(engine.deps, sourceId, 'rest-json', config);
  const run = await startRun(engine.deps, { sourceId, mode: 'full' });
  const ended = await waitForRun(engine.deps, run.runId);
  const { items } = await engine.deps.deadLetters.list(sourceId, { limit: 10 });
  return { ended, reasons: items.map((entry) => entry.reason).join('\n') };
}

const { engine } = useEngineWithFakes('worker-policy', { workers: 1, secrets });
describe('the worker keeps to the source policy', () => {
  it("never resolves another source's secret", async () => {
    const { ended, reasons } = await runToEnd(
      'thief',
      restConfig('http://127.0.0.1:9/records', {
        auth: { header: 'Authorization', prefix: 'Bearer ', secretRef: 'ssm:/harvester/victim/token' },
      }),
    );
    expect(ended.state).toBe('failed');
    expect(reasons).toContain('refused for source thief');
    expect(secrets).not.toHaveBeenCalledWith('ssm:/harvester/victim/token');
  });

  it('never contacts the metadata service, in any spelling', async () => {
    const { ended, reasons } = await runToEnd('imds', restConfig('http://2852039166/latest/meta-data/'));
    expect(ended.state).toBe('failed');
    expect(reasons).toContain('source address refused');
    expect(reasons).toContain('metadata');
  });
});
