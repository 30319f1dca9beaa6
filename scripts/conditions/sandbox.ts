import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/**
 * A throwaway copy of the code and tests in which mutants are applied, so the working tree is
 * never edited: an interrupted run (Ctrl-C, a crash, a killed shell) leaves at most a stale
 * directory under the system's temporary folder, never a mutated source file.
 */
export class Sandbox {
  readonly root: string;
  private running: ChildProcess | undefined;

  constructor(private readonly repo: string) {
    this.root = mkdtempSync(join(tmpdir(), 'harvester-conditions-'));
    for (const entry of ['lib', 'tools', 'test', 'package.json', 'tsconfig.json', 'vitest.config.ts'])
      cpSync(join(repo, entry), join(this.root, entry), { recursive: true });
    symlinkSync(realpathSync(join(repo, 'node_modules')), join(this.root, 'node_modules'));
  }

  /** Runs `edit` on the sandbox's copy of `file` (a path in the repository), then restores it. */
  async withEdited<T>(file: string, text: string, body: () => Promise<T>): Promise<T> {
    const copy = join(this.root, relative(this.repo, file));
    const original = readFileSync(copy, 'utf8');
    writeFileSync(copy, text);
    try {
      return await body();
    } finally {
      writeFileSync(copy, original);
    }
  }

  /**
   * Runs vitest over `tests` in the sandbox, stopping at the first failure, and returns the
   * failed tests' names (empty when all passed) or `timeout`.
   */
  async runTests(
    tests: readonly string[],
    env: NodeJS.ProcessEnv,
    timeoutMs: number,
  ): Promise<string[] | 'timeout'> {
    const report = join(this.root, 'vitest-report.json');
    rmSync(report, { force: true });
    const vitest = join(this.root, 'node_modules', 'vitest', 'vitest.mjs');
    const args = [vitest, 'run', ...tests, '--bail=1', '--reporter=json', `--outputFile=${report}`];
    const child = spawn(process.execPath, args, { cwd: this.root, env, stdio: 'ignore', detached: true });
    this.running = child;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.stopTests();
    }, timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    this.running = undefined;
    if (timedOut) return 'timeout';
    const failed = failedTests(report);
    return code === 0 ? [] : failed.length > 0 ? failed : [`vitest exited with ${code}`];
  }

  /** Stops a running vitest and its workers (its own process group). */
  stopTests(): void {
    const pid = this.running?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  remove(): void {
    this.stopTests();
    rmSync(this.root, { recursive: true, force: true });
  }
}

interface JsonReport {
  testResults?: { name: string; assertionResults?: { fullName: string; status: string }[] }[];
}

function failedTests(reportFile: string): string[] {
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport;
    return (report.testResults ?? []).flatMap((file) =>
      (file.assertionResults ?? [])
        .filter((test) => test.status === 'failed')
        .map((test) => `${file.name.split('/').pop()} > ${test.fullName}`),
    );
  } catch {
    return [];
  }
}
