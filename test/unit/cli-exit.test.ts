import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { ApiProblemError, ApiUnreachableError } from '../../lib/cli/client.js';
import { CliUsageError } from '../../lib/cli/errors.js';
import { EXIT_CODES } from '../../lib/cli/exit-codes.js';
import { exitCodeOf, runCli } from '../../lib/cli/main.js';
import { MissingCredentialsError } from '../../lib/cli/sigv4.js';
import { interruptedLines } from '../../lib/cli/watch.js';
import { captureIo } from '../support/cli-io.js';

const BIN = resolve(import.meta.dirname, '../../bin/harvester.mjs');

function problem(status: number): ApiProblemError {
  return new ApiProblemError({
    type: 'about:blank',
    title: 'Refused',
    status,
    detail: 'no',
    instance: '/x',
    requestId: 'r',
  });
}

describe('the CLI exit codes', () => {
  it.each([
    ['a usage mistake', new CommanderError(1, 'commander.unknownOption', 'unknown option'), EXIT_CODES.usage],
    ['a value refused before any request', new CliUsageError('--mode ful'), EXIT_CODES.usage],
    ['missing AWS credentials', new MissingCredentialsError('none'), EXIT_CODES.auth],
    ['a 403 from the API', problem(403), EXIT_CODES.auth],
    ['a 401 from the API', problem(401), EXIT_CODES.auth],
    ['a 404 from the API', problem(404), EXIT_CODES.failed],
    ['a 409 from the API', problem(409), EXIT_CODES.failed],
    ['an unreachable API', new ApiUnreachableError('refused'), EXIT_CODES.failed],
    ['anything else', new Error('boom'), EXIT_CODES.failed],
  ])('%s exits %i', (_what, error, code) => {
    expect(exitCodeOf(error)).toBe(code);
  });

  it('bare harvester prints the help on stdout and exits 0', async () => {
    const io = captureIo();
    expect(await runCli(['node', 'harvester'], io)).toBe(0);
    expect(io.stdout()).toContain('Usage: harvester');
    expect(io.stdout()).toContain('runs');
    expect(io.stderr()).toBe('');
  });

  it('bare harvester with only global options still prints the help', async () => {
    const io = captureIo();
    expect(await runCli(['node', 'harvester', '--endpoint', 'http://127.0.0.1:9'], io)).toBe(0);
    expect(io.stdout()).toContain('Usage: harvester');
  });

  it('an unknown command is a usage mistake (2), not the help', async () => {
    const io = captureIo();
    expect(await runCli(['node', 'harvester', 'runz'], io)).toBe(EXIT_CODES.usage);
    expect(io.stdout()).not.toContain('Usage: harvester');
  });

  it('a reader that closes the pipe early ends the command quietly with 0', async () => {
    const child = spawn(process.execPath, [BIN, 'connectors', 'describe', 'rest-json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Close the read end before the CLI writes: its first write meets a pipe with no reader.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});

describe('Ctrl-C during a watch', () => {
  it('says the run goes on and how to follow or cancel it, and exits 2', async () => {
    const runId = '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S';
    const running = {
      runId,
      sourceId: 'acme',
      mode: 'full',
      state: 'running',
      summary: '3 processed',
      progress: { processed: 3, total: null, totalIsEstimate: false, pages: 1 },
      openDeadLetters: 0,
      heartbeatAgeSeconds: 1,
      verdict: 'fresh start',
      resume: { reason: 'fresh_start', at: '2026-01-01T00:00:00Z' },
      epoch: 1,
      deferredUntil: null,
    };
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(running));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      const child = spawn(process.execPath, [BIN, '--endpoint', endpoint, 'runs', 'watch', 'acme', runId], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      // Interrupt once the watch has printed its first status line.
      child.stdout.once('data', () => child.kill('SIGINT'));
      const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
      expect(code).toBe(EXIT_CODES.cancelled);
      expect(stderr).toContain(`run ${runId} goes on`);
      expect(stderr).toContain(`harvester --endpoint ${endpoint} runs cancel acme ${runId}`);
    } finally {
      server.close();
    }
  });

  it('names the default command form without an endpoint', () => {
    expect(interruptedLines('acme', 'r1').join('\n')).toContain('harvester runs cancel acme r1');
  });
});
