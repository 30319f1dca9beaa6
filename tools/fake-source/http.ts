import type { IncomingMessage, ServerResponse } from 'node:http';
import { json, type Reply } from './reply.js';
import type { SourceState } from './state.js';

export { json, type Reply };

/** Everything a route handler may read about the request. */
export interface RouteContext {
  readonly state: SourceState;
  readonly query: URLSearchParams;
  /** Named captures of the route pattern (`owner`, `repo`, `id`, `number`). */
  readonly params: Readonly<Record<string, string>>;
  /** `http://host:port` as the client addressed us, for absolute URLs (GitHub's `Link`). */
  readonly origin: string;
  readonly path: string;
  /** Default page size of the rest-json routes. */
  readonly pageSize: number;
}

/** A 400 with a message, for malformed query parameters. */
export function badRequest(message: string): Reply {
  return json(400, { message });
}

/**
 * Reads a positive integer query parameter: the default when absent, null when malformed
 * (so the route can answer 400 instead of guessing).
 */
export function intParam(query: URLSearchParams, name: string, fallback: number): number | null {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const value = Number(raw);
  return Number.isInteger(value) && value >= 1 ? value : null;
}

/** Reads an ISO time query parameter as epoch ms: null when absent, NaN when malformed. */
export function timeParam(query: URLSearchParams, name: string): number | null {
  const raw = query.get(name);
  if (raw === null || raw === '') return null;
  return Date.parse(raw);
}

/** The cache key of a request: path plus its query sorted by name, so parameter order does not matter. */
export function requestKey(path: string, query: URLSearchParams): string {
  const sorted = new URLSearchParams(query);
  sorted.sort();
  const text = sorted.toString();
  return text ? `${path}?${text}` : path;
}

const MAX_BODY_BYTES = 1_024 * 1_024;

/** Reads a request body as JSON; throws on malformed JSON or a body over 1 MiB. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body over 1 MiB');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? {} : JSON.parse(text);
}

/** Writes a reply, unless the client (or `stop()`) already closed the connection. */
export function send(res: ServerResponse, reply: Reply, extraHeaders: Record<string, string>): void {
  if (res.destroyed || res.writableEnded || res.headersSent) return;
  const contentType = reply.raw?.contentType ?? 'application/json; charset=utf-8';
  const body = reply.bytes ?? replyText(reply);
  res.writeHead(reply.status, {
    ...extraHeaders,
    ...reply.headers,
    'content-type': contentType,
    ...(reply.chunked ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
  });
  res.end(body);
}

/** The body of a reply as text, before any encoding. */
export function replyText(reply: Reply): string {
  return reply.raw?.text ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
}
