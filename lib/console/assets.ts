import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
// The same options `npm ci` bundles the page with (scripts/build-cli.mjs).
import BUNDLE from './bundle.json' with { type: 'json' };

/**
 * The console's page: one HTML document, one script and one stylesheet, all served by the
 * process that serves the API, so the page makes no request to any other host. The script and
 * stylesheet are the esbuild bundle `npm ci` writes to dist/console/ (scripts/build-cli.mjs);
 * in a checkout whose web sources are newer than that bundle (or that has none), they are
 * bundled again in memory at the first request, the way bin/harvester.mjs never runs a stale CLI.
 */

/** The bundled script and stylesheet. */
export interface ConsoleAssets {
  readonly js: string;
  readonly css: string;
}

// lib/console/ in a checkout, dist/cli/ in the CLI bundle: the repository root is two up from both.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WEB = join(ROOT, 'lib', 'console', 'web');
const DIST = join(ROOT, 'dist', 'console');

function newestSource(): number {
  if (!existsSync(WEB)) return 0;
  return Math.max(0, ...readdirSync(WEB).map((name) => statSync(join(WEB, name)).mtimeMs));
}

function prebuilt(): ConsoleAssets | undefined {
  const js = join(DIST, 'console.js');
  const css = join(DIST, 'console.css');
  if (!existsSync(js) || !existsSync(css)) return undefined;
  if (statSync(js).mtimeMs < newestSource()) return undefined;
  return { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
}

/** Bundles the web sources in memory (esbuild is a dev dependency: a checkout has it). */
async function bundle(): Promise<ConsoleAssets> {
  const { build } = await import('esbuild');
  const result = await build({ ...(BUNDLE as BuildOptions), absWorkingDir: ROOT, write: false });
  const text = (ext: string) => result.outputFiles.find((file) => file.path.endsWith(ext))?.text ?? '';
  return { js: text('.js'), css: text('.css') };
}

let loaded: Promise<ConsoleAssets> | undefined;

/** The console's script and stylesheet, read or bundled once per process. */
export function consoleAssets(): Promise<ConsoleAssets> {
  loaded ??= Promise.resolve(prebuilt() ?? bundle()).catch((error: unknown) => {
    loaded = undefined;
    throw new Error('the console bundle is missing (dist/console/) and esbuild is not installed', {
      cause: error,
    });
  });
  return loaded;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Harvester console</title>
<link rel="stylesheet" href="/console.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><strong>Harvester</strong>
<nav aria-label="Views"><a href="#/runs">Runs</a><a href="#/dead-letters">Dead letters</a><a href="#/items">Items</a></nav>
</header>
<main id="main" tabindex="-1"><p>Loading…</p></main>
<script src="/console.js"></script>
</body>
</html>
`;

/**
 * Headers of every page response: the page may load only what this server serves and send
 * requests only to it (`connect-src 'self'`), and no other site may frame it.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * Answers a GET of the console's page or assets (`/`, `/console.js`, `/console.css`); false
 * when `path` is none of them, so the caller answers it.
 */
export async function serveConsole(method: string, path: string, res: ServerResponse): Promise<boolean> {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const types: Record<string, string> = {
    '/': 'text/html; charset=utf-8',
    '/console.js': 'text/javascript; charset=utf-8',
    '/console.css': 'text/css; charset=utf-8',
  };
  const type = types[path];
  if (!type) return false;
  const body =
    path === '/' ? PAGE : path === '/console.js' ? (await consoleAssets()).js : (await consoleAssets()).css;
  res.writeHead(200, { 'content-type': type, ...PAGE_HEADERS });
  res.end(method === 'HEAD' ? '' : body);
  return true;
}
