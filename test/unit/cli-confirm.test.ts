import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { type FakeApi, startFakeApi } from '../support/fake-api.js';

let api: FakeApi;

beforeAll(async () => {
  api = await startFakeApi({
    'DELETE /sources/acme': {
      status: 200,
      body: { sourceId: 'acme', deleted: { schedules: 1, runs: 3, deadLetters: 2 } },
    },
  });
});
afterAll(() => api.close());

function deletes(): number {
  return api.seen.filter((r) => r.method === 'DELETE').length;
}

async function remove(io: ReturnType<typeof captureIo>, ...flags: string[]): Promise<number> {
  return runCli(['node', 'harvester', '--endpoint', api.url, 'sources', 'delete', 'acme', ...flags], io);
}

describe('sources delete asks before deleting history', () => {
  it('without a terminal and without --yes, refuses and names the flag; nothing is deleted', async () => {
    const before = deletes();
    const io = captureIo({ isTTY: false });
    expect(await remove(io)).toBe(2);
    expect(io.stderr()).toMatch(/refused without a terminal to ask; pass --yes/);
    expect(deletes()).toBe(before);
  });

  it('on a terminal, "n" keeps the source', async () => {
    const before = deletes();
    const io = captureIo({ isTTY: true, answer: 'n' });
    expect(await remove(io)).toBe(0);
    expect(io.stderr()).toContain(
      'delete source acme with its schedules, run history and dead letters? [y/N]',
    );
    expect(io.stdout()).toContain('kept source acme: nothing deleted');
    expect(deletes()).toBe(before);
  });

  it('on a terminal, "y" deletes', async () => {
    const before = deletes();
    const io = captureIo({ isTTY: true, answer: 'y' });
    expect(await remove(io)).toBe(0);
    expect(io.stdout()).toContain('deleted source acme with 1 schedules, 3 runs and 2 dead letters');
    expect(deletes()).toBe(before + 1);
  });

  it('--yes deletes without asking, terminal or not', async () => {
    const before = deletes();
    const io = captureIo({ isTTY: false });
    expect(await remove(io, '--yes')).toBe(0);
    expect(io.stderr()).toBe('');
    expect(deletes()).toBe(before + 1);
  });
});
