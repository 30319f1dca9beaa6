import { createInterface } from 'node:readline/promises';
import { CliUsageError } from './context.js';
import type { Io } from './output.js';

/**
 * Asks before something that cannot be undone. `--yes` answers for the user; without it, a
 * terminal is asked (`y` or `yes` goes ahead) and anything else — a script, a pipe, CI — is
 * refused with the flag to pass, so nothing is deleted because nobody was there to say no.
 *
 * @returns whether to go ahead (false: the user said no; the caller prints that it stopped)
 */
export async function confirm(
  io: Io,
  question: string,
  options: { yes?: boolean; flag: string },
): Promise<boolean> {
  if (options.yes) return true;
  if (!io.in?.isTTY)
    throw new CliUsageError(
      `${question.replace(/\?$/, '')}: refused without a terminal to ask; pass ${options.flag} to confirm`,
    );
  const rl = createInterface({ input: io.in, output: io.err, terminal: false });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
