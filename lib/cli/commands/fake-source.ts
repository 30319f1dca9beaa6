import type { Command } from 'commander';
import { checkApiUrl } from '../api-url.js';
import { CliUsageError, pasteableCommand, positiveInt } from '../context.js';
import { examples } from '../help.js';
import { type Io, printLines } from '../output.js';
import { untilSignal } from './local.js';

/** `harvester fake-source`: the fault-injecting fake source on a local port. */
export function registerFakeSourceCommand(program: Command, io: Io): void {
  program
    .command('fake-source')
    .addHelpText(
      'after',
      examples('fake-source', 'fake-source --profile flaky --entities 500 --api-url http://127.0.0.1:8787'),
    )
    .description('serve a fake rest-json and GitHub-shaped source with deterministic faults')
    .option('--port <port>', 'port on 127.0.0.1 (0: any free port)', positiveInt('--port'), 8788)
    .option('--entities <n>', 'entities at start', positiveInt('--entities'), 1_000)
    .option('--profile <name>', 'fault profile: none, realistic, flaky, storm, unauthorized', 'none')
    .option('--seed <n>', 'seed of text, broken records and faults', positiveInt('--seed'), 1)
    .option(
      '--api-url <url>',
      'the admin API the printed `sources put` lines talk to (default: env HARVESTER_API_URL, else the local default)',
    )
    .action(
      async (opts: { port: number; entities: number; profile: string; seed: number; apiUrl?: string }) => {
        const api = opts.apiUrl ?? process.env.HARVESTER_API_URL;
        if (api !== undefined)
          checkApiUrl(api, opts.apiUrl !== undefined ? '--api-url' : 'HARVESTER_API_URL');
        const { fakeRestConfig, isProfileName, resolveProfile, startFakeSource, FAULT_PROFILES } =
          await import('../../../tools/fake-source/index.js');
        if (!isProfileName(opts.profile)) {
          throw new CliUsageError(
            `unknown profile "${opts.profile}"; one of ${Object.keys(FAULT_PROFILES).join(', ')}`,
          );
        }
        const source = await startFakeSource({
          port: opts.port,
          entities: opts.entities,
          seed: opts.seed,
          profile: opts.profile,
        });
        const config = fakeRestConfig(source.url);
        const github = { owner: 'acme', repo: 'widgets', baseUrl: source.url, perPage: 100 };
        printLines(io, [
          `fake source ready at ${source.url} (${opts.entities} entities, seed ${opts.seed})`,
          `fault profile ${opts.profile}: ${JSON.stringify(resolveProfile(opts.profile))}`,
          `rest-json  ${source.url}/records   github  ${source.url}/repos/<owner>/<repo>/issues`,
          `gitlab     ${source.url}/api/v4/projects/<id or url-encoded path>/issues`,
          `truth      ${source.url}/_truth    stats   ${source.url}/_stats`,
          'register it with a running `harvester local` (paste either line):',
          `  ${pasteableCommand(api, `sources put demo --connector rest-json --config '${JSON.stringify(config)}' --schedule "rate(1 hour):incremental"`)}`,
          `  ${pasteableCommand(api, `sources put demo-github --connector github-issues --config '${JSON.stringify(github)}'`)}`,
          'Ctrl-C stops it.',
        ]);
        await untilSignal(io, () => source.stop());
      },
    );
}
