#!/usr/bin/env node
// Prebuilds the `harvester` CLI into dist/cli/ with esbuild, so a command starts in a fraction
// of the time TypeScript-on-the-fly takes (tsx compiles every module at each start). Run by
// `npm ci` / `npm install` through the `prepare` script; bin/harvester.mjs falls back to tsx
// when the bundle is missing or older than any source file, so a stale bundle never runs.
import { readFileSync, renameSync, rmSync } from 'node:fs';

// esbuild is a dev dependency: an install without dev dependencies skips the bundle, and the
// bin runs the sources through tsx instead (slower to start, same behaviour).
let build;
try {
  ({ build } = await import('esbuild'));
} catch {
  console.warn('harvester: esbuild not installed; the CLI will run from its TypeScript sources');
  process.exit(0);
}

const root = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

// Chunks are named by content hash: an earlier build's chunks would stay beside the new ones and
// ship in the package. So the bundle is built into a fresh folder that then takes dist/cli's
// place, which also keeps a CLI started meanwhile (tests run one while `npm pack` builds) from
// meeting a half-written bundle.
const next = new URL('dist/cli.next', root);
rmSync(next, { recursive: true, force: true });

await build({
  absWorkingDir: root.pathname,
  entryPoints: { main: 'lib/cli/main.ts' },
  outdir: 'dist/cli.next',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  // Commands load what they need on demand (the local stack, the fake source, SigV4): separate
  // chunks, so `--help` and `runs get` never parse the AWS SDK or the emulator launcher.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  define: { __HARVESTER_VERSION__: JSON.stringify(version) },
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});

rmSync(new URL('dist/cli', root), { recursive: true, force: true });
renameSync(next, new URL('dist/cli', root));

// The web console's page script and stylesheet (lib/console/web/), served from memory by
// `harvester local` and `harvester console`; lib/console/assets.ts bundles the same way on the
// fly when these are missing or older than the sources.
const consoleBundle = JSON.parse(readFileSync(new URL('lib/console/bundle.json', root), 'utf8'));
await build({ ...consoleBundle, absWorkingDir: root.pathname });
