import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readyLines } from '../../lib/cli/commands/local.js';
import { runCli } from '../../lib/cli/main.js';
import { MissingCredentialsError, sigV4Signer } from '../../lib/cli/sigv4.js';
import { captureIo } from '../support/cli-io.js';

/** A loopback port that was free a moment ago (its listener closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function harvester(...args: string[]) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', ...args], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

const savedApiUrl = process.env.HARVESTER_API_URL;
afterEach(() => {
  if (savedApiUrl === undefined) delete process.env.HARVESTER_API_URL;
  else process.env.HARVESTER_API_URL = savedApiUrl;
});

describe('CLI hints', () => {
  it('connection refused on loopback asks whether harvester local is running, naming the URL and its origin', async () => {
    const port = await closedPort();
    const res = await harvester('--endpoint', `http://127.0.0.1:${port}`, 'sources', 'list');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach the API at http://127.0.0.1:${port} (ECONNREFUSED)`);
    expect(res.stderr).toContain('the URL is from --endpoint');
    expect(res.stderr).toContain('is `harvester local` running?');
    expect(res.stderr).toContain('Start it in another terminal: harvester local');
  });

  it('names HARVESTER_API_URL as the origin when the URL came from the environment', async () => {
    process.env.HARVESTER_API_URL = `http://127.0.0.1:${await closedPort()}`;
    const res = await harvester('runs', 'get', 'acme', 'r1');
    expect(res.stderr).toContain('the URL is from HARVESTER_API_URL');
  });

  it.each([
    [['--endpoint', '127.0.0.1:8787'], 'did you mean --endpoint http://127.0.0.1:8787?'],
    [['--endpoint', 'localhost:8787'], 'did you mean --endpoint http://localhost:8787?'],
    [
      ['--endpoint', 'abc.execute-api.eu-west-1.amazonaws.com'],
      'did you mean --endpoint https://abc.execute-api.eu-west-1.amazonaws.com?',
    ],
  ])('a URL without a scheme (%j) is refused with the fix', async (args, fix) => {
    const res = await harvester(...args, 'sources', 'list');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('has no scheme');
    expect(res.stderr).toContain(fix);
  });

  it('HARVESTER_API_URL without a scheme is named as such', async () => {
    process.env.HARVESTER_API_URL = '127.0.0.1:8787';
    const res = await harvester('sources', 'list');
    expect(res.stderr).toContain('did you mean HARVESTER_API_URL=http://127.0.0.1:8787?');
  });

  it('local --api-port on a taken port says so before starting anything, and offers --api-port 0', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const started = Date.now();
      const res = await harvester('local', '--api-port', String(port));
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`127.0.0.1:${port} is already in use (EADDRINUSE)`);
      expect(res.stderr).toContain('any free one (printed when ready): harvester local --api-port 0');
      expect(res.stderr).not.toContain('npx ');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('local prints an export line naming the port it actually listens on', () => {
    const lines = readyLines({
      apiUrl: 'http://127.0.0.1:41234',
      endpoint: 'http://127.0.0.1:5000',
      emulator: 'moto',
      ownEmulator: true,
      prefix: 'harvester',
      workers: 2,
    });
    expect(lines).toContain('  export HARVESTER_API_URL=http://127.0.0.1:41234');
    expect(lines).toContain('try: harvester --endpoint http://127.0.0.1:41234 sources list');
  });

  it('local says whether its state outlives it: in memory with its own moto, kept by an emulator it was given', () => {
    const ready = {
      apiUrl: 'http://127.0.0.1:8787',
      endpoint: 'http://127.0.0.1:5000',
      prefix: 'h',
      workers: 2,
    };
    const own = readyLines({ ...ready, emulator: 'moto', ownEmulator: true }).join('\n');
    expect(own).toContain('state is in memory: Ctrl-C forgets every source, run and item');
    expect(own).toContain('set AWS_ENDPOINT_URL');
    const given = readyLines({ ...ready, emulator: 'given', ownEmulator: false }).join('\n');
    expect(given).toContain('a restart of harvester local finds it again');
    expect(given).not.toContain('forgets');
  });

  it('fake-source --api-url without a scheme is refused before anything starts', async () => {
    const res = await harvester('fake-source', '--api-url', '127.0.0.1:9999');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('did you mean --api-url http://127.0.0.1:9999?');
  });

  describe('missing AWS credentials on an https endpoint', () => {
    // The error the SDK's default chain throws when no provider has credentials.
    const noCredentials = async () => {
      throw Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      });
    };
    const request = {
      method: 'GET',
      url: new URL('https://abc.execute-api.eu-west-1.amazonaws.com/sources'),
      headers: {},
    };
    const savedProfile = process.env.AWS_PROFILE;
    afterEach(() => {
      if (savedProfile === undefined) delete process.env.AWS_PROFILE;
      else process.env.AWS_PROFILE = savedProfile;
    });

    it('without AWS_PROFILE, says how to name one and to log in', async () => {
      delete process.env.AWS_PROFILE;
      const error = await sigV4Signer('eu-west-1', noCredentials)(request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MissingCredentialsError);
      expect((error as Error).message).toContain(
        'no usable AWS credentials to sign requests to abc.execute-api',
      );
      expect((error as Error).message).toContain('export AWS_PROFILE=<profile>');
      expect((error as Error).message).toContain('aws sso login');
    });

    it('with AWS_PROFILE, names the login for that profile', async () => {
      process.env.AWS_PROFILE = 'harvester-admin';
      const error = await sigV4Signer('eu-west-1', noCredentials)(request).catch((e: unknown) => e);
      expect((error as Error).message).toContain('aws sso login --profile harvester-admin');
    });

    it('other signing errors pass through unchanged', async () => {
      const broken = async () => {
        throw new Error('disk on fire');
      };
      const error = await sigV4Signer('eu-west-1', broken)(request).catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(MissingCredentialsError);
    });
  });
});

describe('the invocation hints print', () => {
  it('is `harvester` (the bin on PATH, as the docs install it), never `npx harvester`', () => {
    const sources = ['lib', 'tools'].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(dir, file)),
    );
    expect(sources.length).toBeGreaterThan(50);
    expect(sources.filter((file) => readFileSync(file, 'utf8').includes('npx harvester'))).toEqual([]);
  });
});
