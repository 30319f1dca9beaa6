import { describe, expect, it } from 'vitest';
import { handOverAll, pageMessage } from '../../lib/engine/chain/handoff.js';
import type { EngineDeps } from '../../lib/engine/deps.js';
import type { PageMessage } from '../../lib/queue/page-message.js';

/*
 * A partition plan's first pages go out in one batch. SendMessageBatch can fail some entries and
 * not others: those chains' handoffs are marked failed and the step fails (its message comes
 * back), exactly as a commit whose successor's send failed.
 */

const run = { runId: 'run-1', sourceId: 'src', epoch: 2 };
const firstPages = [0, 1, 2].map((partition) => pageMessage(run, 1, null, { partition }));

function depsWith(failed: (messages: readonly PageMessage[]) => PageMessage[]) {
  const batches: number[] = [];
  const noted: (number | undefined)[] = [];
  const deps = {
    queue: {
      sendBatch: async (messages: readonly PageMessage[]) => {
        batches.push(messages.length);
        return failed(messages);
      },
    },
    chains: {
      noteSendFailed: async (ref: { partition?: number }) => {
        noted.push(ref.partition);
        return true;
      },
    },
    clock: { now: () => 1_000 },
    logger: { warn: () => undefined },
  } as unknown as EngineDeps;
  return { deps, batches, noted };
}

describe('handOverAll', () => {
  it('sends every first page in one batch and writes nothing when SQS takes them all', async () => {
    const { deps, batches, noted } = depsWith(() => []);
    await handOverAll(deps, firstPages);
    expect(batches).toEqual([3]);
    expect(noted).toEqual([]);
  });

  it('marks the handoff of each entry SQS failed and fails the step', async () => {
    const { deps, noted } = depsWith((messages) => [messages[1]!]);
    await expect(handOverAll(deps, firstPages)).rejects.toThrow(/1 of 3 first pages/);
    expect(noted).toEqual([1]);
  });
});
