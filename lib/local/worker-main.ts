/**
 * A page worker as its own process (started by the local runtime with `node --import tsx`), so
 * the demo and the chaos suite can SIGKILL a real worker mid-page. Reads its wiring from the
 * environment (see LocalRuntime.spawnWorker) and polls the page queue until SIGTERM. Under a
 * runtime on a movable clock it follows that clock (clock-link.ts).
 */
import { createAwsClients } from '../aws/clients.js';
import { loadConfig } from '../config/env.js';
import { createEngineDeps, handlePageRecord } from '../engine/index.js';
import { applyLogFormat, chooseLogFormat } from '../observability/pretty-log.js';
import { realRetryDeps } from '../retry/outcome.js';
import { followRuntimeClock } from './clock-link.js';
import { pollQueue } from './sqs-poller.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// `harvester local --log-format pretty` hands its choice down through the environment; else JSON.
applyLogFormat(chooseLogFormat(undefined, process.env, false));
const config = loadConfig();
if (!config.pageQueueUrl || !config.pageQueueArn)
  throw new Error('worker process needs PAGE_QUEUE_URL and PAGE_QUEUE_ARN');
const clients = createAwsClients({
  region: config.region,
  endpoints: config.endpoints,
  local: config.local,
});
// Under a runtime on a movable clock, this worker's time (and its deferrals' wake-ups) follow it.
const clock = followRuntimeClock();
const deps = createEngineDeps({
  config,
  clients,
  queues: { pageQueueUrl: config.pageQueueUrl, pageQueueArn: config.pageQueueArn },
  ...(clock ? { clock, retry: { ...realRetryDeps, now: clock.now }, maxQueueDelayMs: 0 } : {}),
});
const controller = new AbortController();
process.once('SIGTERM', () => controller.abort());
process.once('SIGINT', () => controller.abort());
deps.logger.info('worker process started', { pid: process.pid });
await pollQueue({
  sqs: clients.sqs,
  queueUrl: config.pageQueueUrl,
  handler: (m) => handlePageRecord(deps, m),
  logger: deps.logger,
  signal: controller.signal,
});
process.exit(0);
