import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { serveConsole } from './assets.js';
import { consoleRefusal, ownHost } from './guard.js';
import { listenOnLoopback } from './loopback.js';

/**
 * `harvester console`: the console's page for a deployed stack, on 127.0.0.1, with `/api/*`
 * forwarded to the stack's API and signed on the way (the `kubectl proxy` pattern). The page
 * never sees a credential: the signer lives in this process and adds the headers to each
 * forwarded request. Nothing but `/api/*` is forwarded, and only to the one endpoint given.
 */

/** Adds authentication headers to a request (the CLI's SigV4 signer has this shape). */
export type ProxySigner = (request: {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body?: string;
}) => Promise<Record<string, string>>;

/** Options of {@link startConsoleServer}. */
export interface ConsoleServerOptions {
  /** The API's base URL (a stage path such as `/prod` is kept). */
  readonly endpoint: URL;
  readonly sign: ProxySigner;
  /** Port on 127.0.0.1. Default 0: a free port. */
  readonly port?: number;
}

/** A running console server. */
export interface ConsoleServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  stop(): Promise<void>;
}

/** The API's own body limit: the proxy forwards no more. */
const MAX_BODY_BYTES = 64 * 1024;
/** Request headers worth forwarding; cookies and the browser's own headers stay here. */
const FORWARDED = ['content-type', 'accept'] as const;
/** Response headers the page reads. */
const RETURNED = ['content-type', 'location', 'retry-after'] as const;

function answer(res: ServerResponse, status: number, detail: string): void {
  res.writeHead(status, { 'content-type': 'application/problem+json', connection: 'close' });
  res.end(JSON.stringify({ type: 'about:blank', status, detail }));
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) resolve(undefined);
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * The URL `/api/<rest>` is forwarded to, or undefined for a path that could step out of the
 * endpoint's base path (`.` or `..` segments, raw or encoded).
 */
export function targetOf(endpoint: URL, requestUrl: string): URL | undefined {
  const [path = '', query] = requestUrl.split('?', 2) as [string, string | undefined];
  const rest = path.slice('/api'.length);
  const segments = rest.split('/').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return '..';
    }
  });
  if (!rest.startsWith('/') || segments.some((s) => s === '.' || s === '..')) return undefined;
  const target = new URL(endpoint.href);
  target.pathname = `${endpoint.pathname.replace(/\/+$/, '')}${rest}`;
  target.search = query === undefined ? '' : `?${query}`;
  return target;
}

async function forward(endpoint: URL, sign: ProxySigner, req: IncomingMessage, res: ServerResponse) {
  const method = req.method ?? 'GET';
  const target = targetOf(endpoint, req.url ?? '/');
  if (!target) return answer(res, 400, 'the path has . or .. segments');
  const body = await readBody(req);
  if (body === undefined) return answer(res, 413, `a body over ${MAX_BODY_BYTES} bytes is not forwarded`);
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const withBody = body.length > 0 ? body : undefined;
  const signed = await sign({ method, url: target, headers, ...(withBody ? { body: withBody } : {}) });
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  await new Promise<void>((resolve) => {
    const out = send(target, { method, headers: signed }, (upstream) => {
      const returned: Record<string, string> = {};
      for (const name of RETURNED) {
        const value = upstream.headers[name];
        if (typeof value === 'string') returned[name] = value;
      }
      res.writeHead(upstream.statusCode ?? 502, returned);
      upstream.pipe(res);
      upstream.on('end', resolve);
      upstream.on('error', () => resolve(void res.destroy()));
    });
    out.on('error', (error) => {
      answer(res, 502, `the API at ${endpoint.host} did not answer: ${error.message}`);
      resolve();
    });
    out.end(withBody);
  });
}

/** Starts the console server on 127.0.0.1: the page, and `/api/*` signed to `endpoint`. */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  let port = 0;
  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!;
    if (!ownHost(req.headers.host, port)) return answer(res, 421, 'Host must be this server (127.0.0.1)');
    const refusal = consoleRefusal(method, req.headers, port);
    if (refusal) return answer(res, 403, refusal);
    const handled = path.startsWith('/api/')
      ? forward(options.endpoint, options.sign, req, res).then(() => true)
      : serveConsole(method, path, res);
    handled
      .then((done) => {
        if (!done) answer(res, 404, 'the console serves /, its assets and /api/* only');
      })
      .catch((error: unknown) => {
        if (res.headersSent) return void res.destroy();
        // A signer's error says what to do (which profile, which login): it is the user's own.
        answer(res, 502, error instanceof Error ? error.message : String(error));
      });
  });
  const listening = await listenOnLoopback(server, options.port);
  port = listening.port;
  return { url: listening.url, stop: listening.stop };
}
