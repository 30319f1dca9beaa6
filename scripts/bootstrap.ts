/**
 * `npm run bootstrap`: creates Harvester's tables, queues, bus and schedule group on the endpoint
 * in AWS_ENDPOINT_URL (or a fresh moto, printed and kept until Ctrl-C) with HARVESTER_PREFIX names;
 * a service with its own AWS_ENDPOINT_URL_<SERVICE> gets its resources there.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { createAwsClients, destroyAwsClients } = await import('../lib/aws/clients.js');
const { loadConfig } = await import('../lib/config/env.js');
const { startEmulator } = await import('../lib/local/emulator.js');
const { bootstrapResources } = await import('../lib/resources/bootstrap.js');

const emulator = await startEmulator();
const config = loadConfig({ ...process.env, AWS_ENDPOINT_URL: emulator.endpoint });
// Each service to its own endpoint (AWS_ENDPOINT_URL_DYNAMODB, …), the rest to the emulator.
const clients = createAwsClients({ region: config.region, endpoints: config.endpoints, local: config.local });
const resources = await bootstrapResources(clients, config.names);
console.log(
  JSON.stringify({ endpoint: emulator.endpoint, endpoints: config.endpoints, ...resources }, null, 2),
);
destroyAwsClients(clients);
if (emulator.owned) {
  console.log('moto is running for these resources; Ctrl-C stops it.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emulator.stop();
}
