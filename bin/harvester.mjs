#!/usr/bin/env node
// The `harvester` CLI. Runs the prebuilt bundle (dist/cli, made by `npm run build:cli`, which
// `npm ci` runs through `prepare`) when it is newer than every source file; otherwise runs the
// TypeScript sources through tsx, so an edited checkout never runs a stale bundle.
import { existsSync, readdirSync, statSync } from 'node:fs';

// The SDK's notice that releases after January 2027 need Node 22; the lockfile pins ours.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const bundle = new URL('../dist/cli/main.mjs', import.meta.url);

/** Newest modification time of the sources the bundle is built from. */
function newestSource() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  walk(new URL('../lib/', import.meta.url));
  walk(new URL('../tools/', import.meta.url));
  newest = Math.max(newest, statSync(new URL('../package.json', import.meta.url)).mtimeMs);
  return newest;
}

// Long-running commands start worker processes and the emulator from source paths: run them from
// the sources (their start-up time does not matter); every admin command runs from the bundle.
const FROM_SOURCES = new Set(['local', 'demo', 'fake-source']);
const args = process.argv.slice(2);
const command = args.find((arg, i) => !arg.startsWith('-') && args[i - 1] !== '--endpoint');

let runCli;
if (
  !process.env.HARVESTER_NO_BUNDLE &&
  !FROM_SOURCES.has(command) &&
  existsSync(bundle) &&
  statSync(bundle).mtimeMs >= newestSource()
) {
  ({ runCli } = await import(bundle.href));
} else {
  // tsx is a development dependency (and an optional peer): a checkout has it, an installed
  // package needs it only for the commands that run from sources.
  const tsx = await import('tsx/esm/api').catch(() => undefined);
  if (!tsx) {
    console.error(
      `harvester ${command ?? ''}: this command runs from the TypeScript sources and needs tsx; install it (npm install --save-dev tsx) or run it from a checkout of the repository (npm ci)`,
    );
    process.exit(1);
  }
  tsx.register();
  ({ runCli } = await import('../lib/cli/main.ts'));
}
process.exitCode = await runCli(process.argv);
