import type { ChildProcess } from 'node:child_process';
import { z } from 'zod';
import { type MovableClock, movableClock } from './movable-clock.js';

/*
 * A local runtime on a movable clock shares it with its worker processes, so that a trial can let
 * hours pass (a long Retry-After, a deferral, the 6 h progress budget) for every worker at once.
 * The offset travels at spawn (an environment variable) and over the process's IPC channel on
 * every change; a worker acknowledges each change, so the runtime can wait until all follow.
 * Production never sets the variable: Lambda workers read the real clock.
 */

/** The environment variable that makes a worker process follow its runtime's clock. */
export const CLOCK_OFFSET_ENV = 'HARVESTER_LOCAL_CLOCK_OFFSET_MS';

const clockMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('clock'), offsetMs: z.number(), seq: z.number().int() }),
  z.object({ type: z.literal('clock-ack'), seq: z.number().int() }),
  z.object({ type: z.literal('clock-ready') }),
]);
type ClockMessage = z.infer<typeof clockMessage>;

/** How long {@link WorkerClockLink.sync} waits for a worker (a dying one never answers). */
const ACK_TIMEOUT_MS = 2_000;

/** The runtime's side: pushes the clock's offset to every attached worker process. */
export class WorkerClockLink {
  private readonly children = new Set<ChildProcess>();
  private readonly acked = new Map<ChildProcess, number>();
  private readonly waiters = new Set<() => void>();
  private seq = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly clock: MovableClock) {
    this.unsubscribe = clock.onChange(() => void this.broadcast());
  }

  /** Stops following the clock (the runtime stopped). */
  close(): void {
    this.unsubscribe();
  }

  /** The environment a worker process needs to start at the clock's current offset. */
  env(): Record<string, string> {
    return { [CLOCK_OFFSET_ENV]: String(this.clock.offsetMs()) };
  }

  /** Follows `child` (spawned with an IPC channel) until it exits. */
  attach(child: ChildProcess): void {
    this.children.add(child);
    child.on('message', (raw) => {
      const message = clockMessage.safeParse(raw);
      if (!message.success) return;
      // The offset may have moved between spawn and the worker listening: send it again.
      if (message.data.type === 'clock-ready') this.send(child, this.current());
      if (message.data.type === 'clock-ack') {
        this.acked.set(child, Math.max(this.acked.get(child) ?? 0, message.data.seq));
        for (const wake of this.waiters) wake();
      }
    });
    child.once('exit', () => {
      this.children.delete(child);
      this.acked.delete(child);
      for (const wake of this.waiters) wake();
    });
  }

  /** Resolves once every live worker process follows the clock's current offset. */
  async sync(): Promise<void> {
    const seq = this.broadcast();
    const deadline = Date.now() + ACK_TIMEOUT_MS;
    const behind = () => [...this.children].filter((c) => (this.acked.get(c) ?? 0) < seq);
    while (behind().length > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 50);
        this.waiters.add(wake);
      });
    }
  }

  private current(): ClockMessage {
    return { type: 'clock', offsetMs: this.clock.offsetMs(), seq: this.seq };
  }

  private broadcast(): number {
    this.seq += 1;
    const message = this.current();
    for (const child of this.children) this.send(child, message);
    return this.seq;
  }

  private send(child: ChildProcess, message: ClockMessage): void {
    if (child.connected) child.send(message, (error) => void error);
  }
}

/**
 * The worker's side: a clock that follows the runtime's, when the runtime asked for it (the
 * environment variable is set and the process has an IPC channel); undefined otherwise.
 */
export function followRuntimeClock(env: NodeJS.ProcessEnv = process.env): MovableClock | undefined {
  const raw = env[CLOCK_OFFSET_ENV];
  if (raw === undefined || !process.send) return undefined;
  const clock = movableClock(z.coerce.number().parse(raw));
  process.on('message', (raw: unknown) => {
    const message = clockMessage.safeParse(raw);
    if (!message.success || message.data.type !== 'clock') return;
    clock.setOffset(message.data.offsetMs);
    process.send?.({ type: 'clock-ack', seq: message.data.seq } satisfies ClockMessage);
  });
  process.send({ type: 'clock-ready' } satisfies ClockMessage);
  return clock;
}
