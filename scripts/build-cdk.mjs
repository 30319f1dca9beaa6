#!/usr/bin/env node
// Compiles the CDK construct (infra/index.ts, infra/nag.ts and the lib/ modules they import) to
// JavaScript and declarations in dist/cdk/, which the package's `exports` point at, so a CDK app
// that installs the package runs under plain node. Run by `prepare` (so by `npm ci` and `npm pack`).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url);
// TypeScript is a dev dependency: an install without it keeps whatever dist/cdk it has.
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.warn('harvester: typescript not installed; the CDK construct is not compiled');
  process.exit(0);
}
// A clean output: a module removed from the sources must not linger in the package.
rmSync(new URL('dist/cdk', root), { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: root.pathname,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
