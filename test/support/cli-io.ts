import { PassThrough, Writable } from 'node:stream';
import type { Io } from '../../lib/cli/output.js';

/** An {@link Io} that keeps what a command writes, for asserting on it. */
export interface CapturedIo extends Io {
  stdout(): string;
  stderr(): string;
}

function sink(chunks: string[]): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
}

/**
 * A fresh captured Io. `isTTY` makes stdout and stdin pretend to be a terminal; `answer` is what
 * the user types at a question.
 */
export function captureIo(options: { isTTY?: boolean; answer?: string } = {}): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = Object.assign(sink(out), { isTTY: options.isTTY ?? false });
  const input = Object.assign(new PassThrough(), { isTTY: options.isTTY ?? false });
  if (options.answer !== undefined) input.end(`${options.answer}\n`);
  return {
    in: input,
    out: stdout,
    err: sink(err),
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}
