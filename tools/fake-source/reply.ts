/** What a route answers; the server adds rate-limit headers, latency and faults around it. */
export interface Reply {
  readonly status: number;
  /** Serialized as JSON, unless `raw` is set. */
  readonly body?: unknown;
  /** A pre-rendered body (an HTML error page from a "proxy"), sent as is with its content type. */
  readonly raw?: { readonly contentType: string; readonly text: string };
  /** The body as sent, already encoded (gzip): overrides `body` and `raw.text`, keeps the content type. */
  readonly bytes?: Buffer;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent without `Content-Length` (chunked), as a streaming answer is. */
  readonly chunked?: boolean;
}

/** A JSON reply. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers ? { status, body, headers } : { status, body };
}
