import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workerProcessArgs } from '../../lib/local/runtime.js';

describe('a local worker process', () => {
  it('is started with the TypeScript loader and its entry as absolute paths, so any working directory will do', () => {
    const [flag, loader, entry] = workerProcessArgs();
    expect(flag).toBe('--import');
    // `--import tsx` would be resolved from the working directory: outside the repo, no worker starts.
    expect(loader).toMatch(/^file:\/\/\/.*tsx\//);
    expect(existsSync(fileURLToPath(loader!))).toBe(true);
    expect(entry).toMatch(/\/lib\/local\/worker-main\.ts$/);
    expect(existsSync(entry!)).toBe(true);
  });
});
