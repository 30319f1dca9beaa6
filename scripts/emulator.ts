/**
 * `npm run emulator -- [--port 5000]`: starts the same moto the tests use (DynamoDB requests
 * serialized, so conditional writes are atomic as in AWS; behind the DynamoDB door that refuses
 * what DynamoDB refuses) on a fixed port, for
 * `AWS_ENDPOINT_URL=http://127.0.0.1:5000 npm test`. Ctrl-C stops it.
 */
const { startEmulator } = await import('../lib/local/emulator.js');

const index = process.argv.indexOf('--port');
const port = index >= 0 ? Number(process.argv[index + 1]) : 5000;
if (!Number.isInteger(port) || port <= 0 || port > 65_535) {
  console.error('usage: npm run emulator -- [--port N]');
  process.exit(2);
}
const { AWS_ENDPOINT_URL: _ignored, ...env } = process.env;
const emulator = await startEmulator(env, { port });
const judged = emulator.door ? ", every DynamoDB request judged by DynamoDB's rules at its door" : '';
console.log(`moto ready at ${emulator.endpoint} (DynamoDB serialized${judged}); Ctrl-C stops it`);
await new Promise<void>((resolve) => {
  process.once('SIGINT', resolve);
  process.once('SIGTERM', resolve);
});
await emulator.stop();
