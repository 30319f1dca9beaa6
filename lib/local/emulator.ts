import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { strictModeFromEnv } from '../aws/dynamo-rules.js';
import { type DynamoDoor, openDynamoDoor } from './dynamo-door.js';

/** A running AWS endpoint for local work: one this process started, or one it was given. */
export interface Emulator {
  readonly endpoint: string;
  /** True when this process started moto and will stop it. */
  readonly owned: boolean;
  /** The rule-checking door every DynamoDB request passes (on moto this process started). */
  readonly door?: DynamoDoor;
  stop(): Promise<void>;
}

/** Raised when no endpoint is configured and moto cannot be started. */
export class EmulatorError extends Error {
  override readonly name = 'EmulatorError';
}

export const MOTO_INSTALL_HINT =
  'moto_server was not found: install it with `pip install "moto[server]==5.2.1"`, or set AWS_ENDPOINT_URL to a running emulator';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

// moto 5.2.1 validates an UpdateExpression with passes that are quadratic in its number of
// actions (each nested expression node re-collects every clause below it) and rebuild their
// dispatch table at every node: an item write with a dozen SET actions costs ~70 ms of emulator
// CPU. Two patches keep the same checks and cut that by more than half: the whole-expression
// checks (clause counts, overlapping paths) run at the root only, whose clauses include every
// nested one, each pass builds its table once, and an expression text is parsed once. Only the
// emulator's speed changes.
const SPEEDUPS = `
def _speed_up_update_expressions():
    from moto.dynamodb.parsing import ast_nodes, validators
    def at_root_only(self, node):
        return self.process(node) if isinstance(node, ast_nodes.UpdateExpression) else node
    validators.ActionCountValidator.traverse = at_root_only
    validators.OverlappingPathsValidator.traverse = at_root_only
    def table(self):
        cached = self.__dict__.get("_harvester_table")
        if cached is None:
            cached = self.__dict__["_harvester_table"] = self._processing_map()
            self.__dict__["_harvester_types"] = tuple(cached.keys())
        return cached
    def nodes_to_be_processed(self):
        table(self)
        return self.__dict__["_harvester_types"]
    def process(self, node):
        for kind, processor in table(self).items():
            if isinstance(node, kind):
                return processor(node)
    ast_nodes.DepthFirstTraverser.nodes_to_be_processed = nodes_to_be_processed
    ast_nodes.DepthFirstTraverser.process = process
    # Every reader of a parsed expression copies it before changing it, so one parse per text serves all.
    from moto.dynamodb.parsing import expressions
    parse = expressions.UpdateExpressionParser.make.__func__
    parsed = {}
    def make(cls, text):
        tree = parsed.get(text)
        if tree is None:
            if len(parsed) > 1000:
                parsed.clear()
            tree = parsed[text] = parse(cls, text)
        return tree
    expressions.UpdateExpressionParser.make = classmethod(make)
try:
    _speed_up_update_expressions()
except Exception:
    pass
`;

// Runs moto under two guards. A watchdog exits when our stdin pipe closes, so moto dies with this
// process even when it is SIGKILLed and no cleanup code runs. And DynamoDB requests are
// serialized: moto evaluates a ConditionExpression and applies the update without a lock, so two
// concurrent conditional writes can both pass — real DynamoDB never lets them. Other services
// stay concurrent (SQS long polls must not block the emulator).
const WATCHDOG = `
import os, sys, threading
def watch():
    sys.stdin.read()
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
${SPEEDUPS}
app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()
def serialized(environ, start_response):
    if environ.get("PATH_INFO") == "/_harvester/emulator":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"serializedDynamoDB": true}']
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB"):
        with lock:
            return list(app(environ, start_response))
    return app(environ, start_response)
run_simple(host, port, serialized, threaded=True)
`;

function commandExists(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function spawnMoto(port: number): ChildProcess {
  const python = process.env.HARVESTER_PYTHON ?? 'python3';
  if (!commandExists('moto_server')) throw new EmulatorError(MOTO_INSTALL_HINT);
  const canImport = spawnSync(python, ['-c', 'import moto.server'], { stdio: 'ignore' }).status === 0;
  const child = canImport
    ? spawn(python, ['-c', WATCHDOG, '127.0.0.1', String(port)], { stdio: ['pipe', 'ignore', 'pipe'] })
    : spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['pipe', 'ignore', 'pipe'] });
  child.stderr?.resume();
  return child;
}

async function waitUntilAnswering(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new EmulatorError(`moto_server exited with code ${child.exitCode}`);
    try {
      const response = await fetch(`${endpoint}/moto-api/`);
      await response.arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new EmulatorError(`moto_server did not answer at ${endpoint} within ${timeoutMs} ms`);
}

/**
 * Returns the AWS endpoint to use: `AWS_ENDPOINT_URL` when set (LocalStack, a moto started by
 * hand), otherwise a fresh `moto_server` on a free loopback port that {@link Emulator.stop}
 * ends. The moto process also ends by itself if this process dies.
 */
export async function startEmulator(
  env: NodeJS.ProcessEnv = process.env,
  options: {
    port?: number;
    /**
     * Put a DynamoDB door (lib/local/dynamo-door.ts) in front of the moto this starts, so every
     * request is judged by DynamoDB's rules at the emulator. Default: unless
     * `HARVESTER_STRICT_DYNAMODB=off`. With a fixed `port`, the door listens there and moto on a free one.
     */
    door?: boolean;
  } = {},
): Promise<Emulator> {
  const given = env.AWS_ENDPOINT_URL;
  if (given) return { endpoint: given, owned: false, stop: async () => {} };
  const strict = strictModeFromEnv(env);
  const withDoor = options.door ?? strict?.kind !== 'off';
  const port = (withDoor ? undefined : options.port) ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawnMoto(port);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  try {
    await waitUntilAnswering(endpoint, child, 30_000);
  } catch (error) {
    kill();
    throw error;
  }
  const door = withDoor
    ? await openDynamoDoor(endpoint, {
        ...(strict?.kind === 'report' ? { logFile: strict.file, refuse: false } : {}),
        ...(options.port ? { port: options.port } : {}),
      })
    : undefined;
  return {
    endpoint: door?.endpoint ?? endpoint,
    owned: true,
    ...(door ? { door } : {}),
    async stop() {
      await door?.close();
      process.removeListener('exit', kill);
      child.stdin?.end();
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * True when `endpoint` is the moto this project starts (DynamoDB requests serialized, so
 * conditional writes are atomic). A plain moto_server is not: see {@link startEmulator}.
 */
export async function isSerializedEmulator(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/_harvester/emulator`, { signal: AbortSignal.timeout(2_000) });
    const body = (await response.json()) as { serializedDynamoDB?: boolean };
    return response.ok && body.serializedDynamoDB === true;
  } catch {
    return false;
  }
}
