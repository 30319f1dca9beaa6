import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, workLogger } from '../../lib/observability/logger.js';

/** The lines `log` writes, parsed (Powertools writes INFO to stdout, WARN and ERROR to stderr). */
function captured(log: () => void): Record<string, unknown>[] {
  const chunks: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
  }
  log();
  vi.restoreAllMocks();
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

afterEach(() => vi.restoreAllMocks());

describe('the Harvester log line', () => {
  it('prints level, message, time, service, then run, source, epoch and page, then the rest', () => {
    const logger = createLogger('INFO');
    const [line] = captured(() =>
      workLogger(logger, { page: 7, epoch: 3, sourceId: 'acme', runId: '01JRUN' }).info('page committed', {
        items: 25,
      }),
    );
    expect(Object.keys(line!)).toEqual([
      'level',
      'message',
      'timestamp',
      'service',
      'runId',
      'sourceId',
      'epoch',
      'page',
      'items',
    ]);
    expect(line).toMatchObject({ level: 'INFO', service: 'harvester', epoch: 3, page: 7, items: 25 });
  });

  it('keeps the work keys given per call and leaves out the ones a line does not have', () => {
    const [line] = captured(() =>
      createLogger('INFO').warn('expected page sent again', { reason: 'stale', sourceId: 's', runId: 'r' }),
    );
    expect(Object.keys(line!)).toEqual([
      'level',
      'message',
      'timestamp',
      'service',
      'runId',
      'sourceId',
      'reason',
    ]);
  });

  it('prints a credential-named value as [redacted], nested too, and a reference to a secret as is', () => {
    const secret = 'ghp_s3cr3t-value';
    const [line] = captured(() =>
      createLogger('INFO').error('request refused', {
        sourceId: 's',
        tokenRef: 'ssm:/harvester/s/token',
        request: { headers: { Authorization: `Bearer ${secret}`, 'X-Api-Key': secret, accept: 'json' } },
        attempts: [{ token: secret }],
      }),
    );
    expect(JSON.stringify(line)).not.toContain(secret);
    expect(line).toMatchObject({
      tokenRef: 'ssm:/harvester/s/token',
      request: { headers: { Authorization: '[redacted]', 'X-Api-Key': '[redacted]', accept: 'json' } },
      attempts: [{ token: '[redacted]' }],
    });
  });

  it('prints an error with its name and message', () => {
    const [line] = captured(() =>
      createLogger('INFO').error('failed', { error: new TypeError('bad cursor') }),
    );
    expect(line?.error).toMatchObject({ name: 'TypeError', message: 'bad cursor' });
  });
});

/** Keys Powertools owns on every line: an attribute of the same name is dropped, with a warning. */
const RESERVED = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);
const LOG_METHODS = new Set(['debug', 'info', 'warn', 'error', 'critical']);

/** `file:line key` for each log call in `file` whose attributes name a reserved key. */
function reservedKeysLogged(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (!/\.(debug|info|warn|error|critical)\(/.test(text)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      LOG_METHODS.has(node.expression.name.text)
    ) {
      for (const argument of node.arguments.slice(1)) {
        if (!ts.isObjectLiteralExpression(argument)) continue;
        for (const property of argument.properties) {
          const name = property.name && ts.isIdentifier(property.name) ? property.name.text : undefined;
          if (name && RESERVED.has(name)) {
            const { line } = source.getLineAndCharacterOfPosition(node.getStart());
            found.push(`${file}:${line + 1} ${name}`);
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('log calls', () => {
  it('name no attribute like a key Powertools owns (it would be dropped)', () => {
    const files = ['lib', 'functions'].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(dir, file)),
    );
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap(reservedKeysLogged)).toEqual([]);
  });
});
