import { LOG_FORMAT_ENV, type LogFormat } from './log-format.js';
import { WORK_KEYS } from './work-keys.js';

/** Keys the pretty line shows in its fixed columns, or leaves out as noise on a terminal. */
const SHOWN_APART = new Set<string>(['level', 'message', 'timestamp', 'service', ...WORK_KEYS]);

const LEVEL_COLOR: Record<string, string> = {
  WARN: '\u001b[33m',
  ERROR: '\u001b[31m',
  CRITICAL: '\u001b[31m',
};
const RESET = '\u001b[0m';

/**
 * The format to print in: the flag if given, else `HARVESTER_LOG_FORMAT`, else pretty on a
 * terminal and JSON when the output is piped (a file or a log shipper wants JSON).
 */
export function chooseLogFormat(flag: string | undefined, env: NodeJS.ProcessEnv, isTTY: boolean): LogFormat {
  const chosen = flag ?? env[LOG_FORMAT_ENV];
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return isTTY ? 'pretty' : 'json';
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  if (value && typeof value === 'object' && 'name' in value && 'message' in value && !Array.isArray(value)) {
    // A logged Error: its name and message; the stack stays in the JSON format.
    const { name, message } = value as { name: unknown; message: unknown };
    return JSON.stringify(`${String(name)}: ${String(message)}`);
  }
  return JSON.stringify(value) ?? String(value);
}

/** `run 01J… source acme e3 p7 part 2`: where the line belongs, in a fixed order. */
function workText(line: Record<string, unknown>): string {
  const parts: string[] = [];
  if (line.runId !== undefined) parts.push(`run ${String(line.runId)}`);
  if (line.sourceId !== undefined) parts.push(`source ${String(line.sourceId)}`);
  if (line.epoch !== undefined) parts.push(`e${String(line.epoch)}`);
  if (line.page !== undefined) parts.push(`p${String(line.page)}`);
  if (line.partition !== undefined) parts.push(`part ${String(line.partition)}`);
  return parts.join(' ');
}

/**
 * One JSON log line as a person reads it:
 * `22:04:31.123 WARN  run 01JRUN source acme e3 p7 | page deferred  reason=rate attempts=2`.
 * A line that is not a Harvester log line (the CLI's own output, a stray print) comes back as is.
 */
export function prettyLogLine(text: string, options: { color?: boolean } = {}): string {
  let line: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return text;
    line = parsed as Record<string, unknown>;
  } catch {
    return text;
  }
  if (typeof line.level !== 'string' || typeof line.message !== 'string') return text;
  const time =
    typeof line.timestamp === 'string' ? (line.timestamp.match(/T(\d\d:\d\d:\d\d\.\d+)/)?.[1] ?? '') : '';
  const level = line.level.padEnd(5);
  const colored =
    options.color && LEVEL_COLOR[line.level] ? `${LEVEL_COLOR[line.level]}${level}${RESET}` : level;
  const work = workText(line);
  const fields = Object.entries(line)
    .filter(([key, value]) => !SHOWN_APART.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${valueText(value)}`);
  return [time, colored, work ? `${work} |` : '', line.message, fields.length ? ` ${fields.join(' ')}` : '']
    .filter((part) => part !== '')
    .join(' ');
}

type Write = NodeJS.WriteStream['write'];

/**
 * Rewrites every complete JSON log line written to `stream` with {@link prettyLogLine}; other
 * output passes through. Powertools writes a line per call, but a partial chunk is held until
 * its newline so a line is never parsed in halves. Returns the function that puts `write` back.
 */
export function prettyWrites(stream: NodeJS.WriteStream, options: { color?: boolean } = {}): () => void {
  const original = stream.write;
  let pending = '';
  const write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = pending + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const end = text.lastIndexOf('\n');
    pending = end === -1 ? text : text.slice(end + 1);
    if (end === -1) return true;
    const lines = text
      .slice(0, end)
      .split('\n')
      .map((line) => prettyLogLine(line, options));
    return (original as (...args: unknown[]) => boolean).call(stream, `${lines.join('\n')}\n`, ...rest);
  }) as Write;
  stream.write = write;
  return () => {
    if (stream.write === write) stream.write = original;
    if (pending) original.call(stream, pending);
  };
}

/**
 * Turns pretty printing on for this process's stdout and stderr when `format` says so (the local
 * stack and its worker processes call it; Lambda never does). Returns the undo.
 */
export function applyLogFormat(format: LogFormat): () => void {
  if (format !== 'pretty') return () => {};
  const undo = [process.stdout, process.stderr].map((stream) =>
    prettyWrites(stream, { color: Boolean(stream.isTTY) }),
  );
  return () => {
    for (const step of undo) step();
  };
}
