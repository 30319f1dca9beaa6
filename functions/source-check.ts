/**
 * The connection check of one source (`POST /sources/{sourceId}/test`), invoked synchronously by
 * the admin API with `{ sourceId }` and nothing else: it reads the source's row itself, so no
 * caller can hand it a config, and checks it as `testSource` does (the row's MAC verified before
 * a secret is resolved, a check slot held, the rate budget spent, secrets bound to their origins
 * and scrubbed from the answer). With the page worker, it is the only function whose role reads
 * connector secrets; its reserved concurrency bounds how many checks the stack runs at once.
 * The answer travels as lossless JSON text (lib/api/source-check.ts).
 */
import {
  encodeSourceCheckAnswer,
  runSourceCheck,
  SourceCheckRequestSchema,
} from '../lib/api/source-check.js';
import { annotateWork, observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';

const { engine, observability } = lambdaRuntime();

export const handler = observed(observability, async (event: unknown): Promise<string> => {
  // Anything but `{ sourceId }` fails the invocation, which the API answers 502.
  const { sourceId } = SourceCheckRequestSchema.parse(event);
  annotateWork(observability.tracer, { sourceId });
  return encodeSourceCheckAnswer(await runSourceCheck(engine, sourceId));
});
