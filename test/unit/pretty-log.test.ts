import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, workLogger } from '../../lib/observability/logger.js';
import { chooseLogFormat, prettyLogLine, prettyWrites } from '../../lib/observability/pretty-log.js';

/** The JSON line the real logger writes for `log`. */
function jsonLine(log: () => void): string {
  const chunks: string[] = [];
  for (const stream of [process.stdout, process.stderr])
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
  log();
  vi.restoreAllMocks();
  return chunks.join('').trim();
}

describe('prettyLogLine', () => {
  it('prints time, level, run, source, epoch, page, message and the other fields on one line', () => {
    const logger = workLogger(createLogger('INFO'), { runId: '01JRUN', sourceId: 'acme', epoch: 3, page: 7 });
    const line = jsonLine(() => logger.warn('page deferred', { reason: 'rate limit', attempts: 2 }));
    expect(prettyLogLine(line)).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}run 01JRUN source acme e3 p7 \| page deferred {2}reason="rate limit" attempts=2$/,
    );
  });

  it('prints a logged error as its name and message, and a line without work keys without them', () => {
    const line = jsonLine(() =>
      createLogger('INFO').error('drain failed', { error: new TypeError('bad body') }),
    );
    expect(prettyLogLine(line)).toMatch(/ ERROR drain failed {2}error="TypeError: bad body"$/);
  });

  it('colours warnings and errors on a terminal', () => {
    const line = jsonLine(() => createLogger('INFO').error('boom'));
    expect(prettyLogLine(line, { color: true })).toContain('\u001b[31mERROR\u001b[0m');
  });

  it.each(['API ready at http://127.0.0.1:8787', '{"items": [1, 2]}', '[1,2]', '{not json', ''])(
    'leaves %j as it is (not a log line)',
    (text) => {
      expect(prettyLogLine(text)).toBe(text);
    },
  );
});

describe('chooseLogFormat', () => {
  it.each([
    ['pretty', {}, false, 'pretty'],
    ['json', {}, true, 'json'],
    [undefined, { HARVESTER_LOG_FORMAT: 'json' }, true, 'json'],
    [undefined, { HARVESTER_LOG_FORMAT: 'pretty' }, false, 'pretty'],
    [undefined, {}, true, 'pretty'],
    [undefined, {}, false, 'json'],
  ] as const)('flag %s, env %j, terminal %s: %s', (flag, env, isTTY, expected) => {
    expect(chooseLogFormat(flag, env, isTTY)).toBe(expected);
  });
});

describe('prettyWrites', () => {
  it('rewrites whole log lines, holds a partial one until its newline, and passes other output through', () => {
    const stream = new PassThrough() as unknown as NodeJS.WriteStream;
    const written: string[] = [];
    (stream as unknown as PassThrough).on('data', (chunk) => written.push(String(chunk)));
    const restore = prettyWrites(stream);
    const line =
      '{"level":"INFO","message":"run started","timestamp":"2026-12-01T22:04:31.123Z","runId":"r1"}';
    stream.write('API ready\n');
    stream.write(line.slice(0, 20));
    stream.write(`${line.slice(20)}\n`);
    restore();
    stream.write(`${line}\n`);
    expect(written).toEqual(['API ready\n', '22:04:31.123 INFO  run r1 | run started\n', `${line}\n`]);
  });
});
