import { readFileSync } from 'node:fs';

/** Set by the prebuilt bundle (esbuild `define`); absent when the CLI runs from TypeScript. */
declare const __HARVESTER_VERSION__: string | undefined;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The CLI's version: the package's. */
export const CLI_VERSION: string =
  typeof __HARVESTER_VERSION__ === 'string' ? __HARVESTER_VERSION__ : packageVersion();
