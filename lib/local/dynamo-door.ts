import { appendFileSync } from 'node:fs';
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeySchema } from '../aws/dynamo-rule-checks.js';
import { type Checked, describeKeys, wireViolation } from '../aws/dynamo-rules.js';

/**
 * The emulator's door: a loopback HTTP proxy in front of moto that judges every DynamoDB request
 * by DynamoDB's own rules before the emulator sees it, whoever sent it — a client built without
 * the strict layer, a test helper, a worker process, the CLI. It is the independent check behind
 * the strict layer (lib/aws/dynamo-rules.ts): both share the rules, but the layer runs inside
 * the caller, where a client built another way escapes it, and the door runs where every request
 * must pass. A request that breaks a rule is answered as DynamoDB answers it (HTTP 400,
 * `ValidationException`) and remembered; everything else is passed through byte for byte.
 */
export interface DynamoDoor {
  /** The endpoint to give clients instead of the emulator's. */
  readonly endpoint: string;
  /** Every request the door refused since it opened. */
  violations(): readonly DoorViolation[];
  close(): Promise<void>;
}

/** One refused request. */
export interface DoorViolation {
  readonly at: string;
  readonly operation: string;
  readonly tables: readonly string[];
  readonly name: string;
  readonly message: string;
}

export interface DoorOptions {
  /** Where each refusal is also appended as one JSON line (a suite's processes share it). */
  readonly logFile?: string;
  /** False to pass a breaking request on after noting it (the strict layer's report mode). Default true. */
  readonly refuse?: boolean;
  /** The loopback port to listen on (default: a free one). */
  readonly port?: number;
}

/**
 * Opens a door in front of `target` (an emulator's endpoint) on a free loopback port.
 *
 * @example
 * const door = await openDynamoDoor('http://127.0.0.1:5000');
 * // clients use door.endpoint; door.violations() lists what DynamoDB would have refused
 */
export async function openDynamoDoor(target: string, options: DoorOptions = {}): Promise<DynamoDoor> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const refused: DoorViolation[] = [];
  const schemas = new Map<string, Promise<KeySchema | undefined>>();
  const schemaOf = (table: string) => {
    let schema = schemas.get(table);
    if (!schema) {
      schema = describeKeys(
        {
          endpoint: target,
          region: 'us-east-1',
          credentials: { accessKeyId: 'door', secretAccessKey: 'door' },
        },
        table,
      );
      schemas.set(table, schema);
      // A table not there yet may be created later: only a found schema is kept.
      void schema.then((found) => found ?? schemas.delete(table));
    }
    return schema;
  };

  const forward = (incoming: IncomingMessage, outgoing: ServerResponse, body?: Buffer) => {
    const headers = { ...incoming.headers };
    if (body) headers['content-length'] = String(body.length);
    const proxied = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers,
        agent,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    proxied.on('error', (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end(`emulator unreachable behind the DynamoDB door: ${error.message}`);
    });
    if (body) proxied.end(body);
    else incoming.pipe(proxied);
  };

  const server = createServer((incoming, outgoing) => {
    const target = incoming.headers['x-amz-target'];
    const operation = typeof target === 'string' ? target : undefined;
    if (!operation?.startsWith('DynamoDB_20120810.')) return forward(incoming, outgoing);
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      judge(operation, body, schemaOf).then(
        (violation) => {
          if (!violation) return forward(incoming, outgoing, body);
          const entry: DoorViolation = {
            at: new Date().toISOString(),
            operation: violation.operation,
            tables: violation.tables,
            name: violation.name,
            message: violation.message,
          };
          refused.push(entry);
          if (options.logFile)
            appendFileSync(options.logFile, `${JSON.stringify({ ...entry, at_door: true })}\n`);
          if (options.refuse === false) return forward(incoming, outgoing, body);
          outgoing.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
          outgoing.end(
            JSON.stringify({
              __type: `com.amazon.coral.validate#${violation.name}`,
              message: violation.message,
            }),
          );
        },
        // A body the door cannot read is DynamoDB's to judge, not the door's.
        () => forward(incoming, outgoing, body),
      );
    });
  });
  // SQS long polls and slow emulator answers must not be cut by the door.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    violations: () => [...refused],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

async function judge(
  operation: string,
  body: Buffer,
  schemaOf: (table: string) => Promise<KeySchema | undefined>,
): Promise<Checked | null> {
  return wireViolation(operation, body.toString('utf8'), schemaOf);
}
