import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../lib/api/version.js';

// The package as a CDK user gets it: `npm pack` (which builds dist/ through `prepare`), the
// tarball unpacked into the node_modules of examples/app, that app compiled with plain tsc and run
// with plain node. Offline: the package's own dependencies are linked from this checkout's
// node_modules instead of installed from the registry.
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

/** What `npm pack --json` reports of one tarball. */
interface Packed {
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: readonly { readonly path: string }[];
}

/** Packed size limit: the package weighed 3.4 MB with source maps and the test fault layer. */
const MAX_PACKED_BYTES = 2_500_000;

let packed: Packed;
let paths: string[];
let installed: string;
/** The tarball unpacked on its own, no dependency beside it. */
let alone: string;
/** Runs node in `cwd`; a failure carries what the command printed (tsc's errors, a synth error). */
function node(args: string[], cwd: string, env: Record<string, string> = {}): void {
  try {
    execFileSync(process.execPath, args, {
      cwd,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`node ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

let template: { Resources: Record<string, { Type: string }>; Outputs: Record<string, unknown> };
let outdir: string;

beforeAll(() => {
  const work = mkdtempSync(join(tmpdir(), 'harvester-package-'));
  // `npm pack` runs `prepare`, which bundles the CLI into dist/cli and compiles the construct into dist/cdk.
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
  });
  packed = (JSON.parse(out) as Packed[])[0] as Packed;
  paths = packed.files.map((f) => f.path);
  alone = join(work, 'alone');
  mkdirSync(alone);
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', alone]);

  const app = join(work, 'app');
  const modules = join(app, 'node_modules');
  installed = join(modules, 'harvester');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', installed, '--strip-components=1']);
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry !== 'harvester' && !entry.startsWith('.')) {
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    }
  }
  for (const file of ['app.ts', 'tsconfig.json', 'package.json']) {
    copyFileSync(join(root, 'examples/app', file), join(app, file));
  }
  // The lock file `npm install` would have written: NodejsFunction looks for the app's.
  writeFileSync(
    join(app, 'package-lock.json'),
    JSON.stringify({ name: 'harvester-example-app', lockfileVersion: 3, requires: true, packages: {} }),
  );

  node([tsc, '-p', app], app);
  outdir = join(app, 'cdk.out');
  node(['dist/app.js'], app, { CDK_OUTDIR: outdir });
  template = JSON.parse(readFileSync(join(outdir, 'ExamplePlatform.template.json'), 'utf8'));
}, 120_000);

describe('the packed package in a CDK app compiled with tsc', () => {
  it('synthesizes Harvester in a stack of the app’s own, from the compiled construct', () => {
    const types = Object.values(template.Resources).map((r) => r.Type);
    expect(types.filter((t) => t === 'AWS::DynamoDB::Table')).toHaveLength(5);
    expect(types.filter((t) => t === 'AWS::Lambda::Function').length).toBeGreaterThanOrEqual(6);
    expect(types).toContain('AWS::SQS::Queue');
    expect(types).toContain('AWS::ApiGatewayV2::Api');
  });

  it('bundles the Lambda handlers from the sources the package ships', () => {
    const bundles = readdirSync(outdir).filter((d) => existsSync(join(outdir, d, 'index.mjs')));
    expect(bundles.length).toBeGreaterThanOrEqual(6);
  });

  it('adds the outputs it was asked for under stable ids, beside the app’s own', () => {
    expect(Object.keys(template.Outputs).sort()).toEqual(
      [
        'HarvesterApiUrl',
        'HarvesterDashboardUrl',
        'HarvesterDeadLettersTableName',
        'HarvesterEventBusName',
        'HarvesterItemsTableName',
        'HarvesterNotificationTopicArn',
        'HarvesterPageDlqUrl',
        'HarvesterPageQueueUrl',
        'HarvesterRateBudgetsTableName',
        'HarvesterScheduleGroupName',
        'HarvesterSourcesTableName',
        'HarvesterStartRunDlqUrl',
        'HarvesterSyncRunsTableName',
        'ItemsTableArn',
      ].sort(),
    );
  });
});

describe('the tarball', () => {
  it(`stays under ${MAX_PACKED_BYTES / 1e6} MB packed, without source maps or test code`, () => {
    expect(packed.size).toBeLessThan(MAX_PACKED_BYTES);
    expect(paths.filter((p) => p.endsWith('.map'))).toEqual([]);
    expect(paths.filter((p) => /^(test|infra|node_modules|examples)\//.test(p))).toEqual([]);
    expect(paths).not.toContain('lib/aws/dynamo-faults.ts');
  });

  it('holds the compiled construct, the CLI bundle and the handler sources', () => {
    for (const file of [
      'dist/cdk/infra/index.js',
      'dist/cdk/infra/index.d.ts',
      'dist/cdk/infra/nag.js',
      'dist/cli/main.mjs',
      'bin/harvester.mjs',
      'functions/page-worker.ts',
    ]) {
      expect(paths).toContain(file);
    }
  });

  it('runs `harvester --help` from an empty folder with nothing installed', () => {
    const empty = mkdtempSync(join(tmpdir(), 'harvester-empty-'));
    const help = execFileSync(process.execPath, [join(alone, 'package', 'bin', 'harvester.mjs'), '--help'], {
      cwd: empty,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: empty },
    });
    expect(help).toMatch(/Usage: harvester/);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('runs the CLI from its bundle once installed', () => {
    const out = execFileSync(process.execPath, [join(installed, 'bin/harvester.mjs'), '--version'], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe(`${version} (admin API ${API_VERSION})`);
  });

  it('holds every module the handlers, the CLI and `harvester local` load from sources', async () => {
    const entries = [
      'lib/cli/main.ts',
      'lib/local/worker-main.ts',
      ...readdirSync(join(installed, 'functions'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `functions/${f}`),
    ];
    const result = await build({
      absWorkingDir: installed,
      entryPoints: entries,
      bundle: true,
      write: false,
      splitting: true,
      format: 'esm',
      platform: 'node',
      outdir: 'out',
      packages: 'external',
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
  });
});
