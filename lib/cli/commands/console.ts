import type { Command } from 'commander';
import { checkApiUrl } from '../api-url.js';
import { CliUsageError, positiveInt } from '../context.js';
import { examples } from '../help.js';
import { type Io, printLines } from '../output.js';
import { untilSignal } from './local.js';

/**
 * `harvester console`: the reference console for a deployed stack. A server on 127.0.0.1 serves
 * the page and forwards its `/api/*` requests to the stack's API, each signed with SigV4 by this
 * process with the user's AWS credentials; the page holds none. `harvester local` serves the same
 * page at its own URL, so this command is for stacks on AWS (or any endpoint to sign for).
 */
export function registerConsoleCommand(program: Command, io: Io): void {
  program
    .command('console')
    .addHelpText(
      'after',
      examples(
        'console --endpoint https://abc123.execute-api.eu-west-1.amazonaws.com',
        'console --endpoint https://abc123.execute-api.eu-west-1.amazonaws.com/prod --port 0',
      ),
    )
    .description(
      "serve the web console on 127.0.0.1 for the API at --endpoint, signing each of its requests with SigV4 and this shell's AWS credentials (harvester local serves it at its own URL)",
    )
    .option('--port <port>', 'port on 127.0.0.1 (0: any free port, printed)', positiveInt('--port'), 8788)
    .option('--region <region>', 'region to sign for (default: the one in the endpoint, else AWS_REGION)')
    .action(async (opts: { port: number; region?: string }, cmd: Command) => {
      const given = cmd.optsWithGlobals<{ endpoint?: string }>().endpoint;
      const origin = given !== undefined ? '--endpoint' : 'HARVESTER_API_URL';
      const value = given ?? process.env.HARVESTER_API_URL;
      if (!value)
        throw new CliUsageError(
          'console needs the API to serve: harvester console --endpoint <ApiUrl> (the stack output ApiUrl)',
        );
      const endpoint = checkApiUrl(value, origin);
      const { regionOfEndpoint, sigV4Signer } = await import('../sigv4.js');
      const env = process.env;
      const region = opts.region ?? regionOfEndpoint(endpoint) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
      const { startConsoleServer } = await import('../../console/proxy.js');
      const server = await startConsoleServer({
        endpoint,
        sign: sigV4Signer(region ?? 'us-east-1'),
        port: opts.port,
      });
      printLines(io, [
        `console at ${server.url}/`,
        `API ${endpoint.href}, each request signed for ${region ?? 'us-east-1'} with your AWS credentials`,
        'Ctrl-C stops it.',
      ]);
      await untilSignal(io, () => server.stop());
    });
}
