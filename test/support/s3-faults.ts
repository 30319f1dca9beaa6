import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { HttpResponse } from '@smithy/protocol-http';
import type { DeserializeMiddleware } from '@smithy/types';

/**
 * A thin fault injector for an S3 client: chosen requests are answered with a canned S3 error
 * response (status, XML body, headers) that the SDK's own deserializer turns into the error S3
 * would have caused — a real `SlowDown` / `AccessDenied` SDK exception, not a hand-made object —
 * or fail with a network error. Every other request goes to the emulator unchanged.
 */

/** One injected failure. */
export type S3Fault =
  | { readonly kind: 'error'; readonly status: number; readonly code: string; readonly message?: string }
  | { readonly kind: 'network'; readonly code: string };

/** What the injector saw: each request's command and its input. */
export interface S3Request {
  readonly command: string;
  readonly input: Record<string, unknown>;
  readonly faulted: boolean;
}

/** Controls the faults of one client. */
export interface S3FaultInjector {
  /** The next `times` requests of `command` (`ListObjectsV2Command`, `*` for any) fail with `fault`. */
  failNext(command: string, fault: S3Fault, times?: number): void;
  /** Every request so far. */
  readonly requests: S3Request[];
  clear(): void;
}

/** The XML error body S3 sends. */
export function s3ErrorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>FAKE${code.length}REQ</RequestId><HostId>fake-host</HostId></Error>`;
}

/** Adds the injector to `client` (a middleware just inside the SDK's deserializer). */
export function injectS3Faults(client: S3Client): S3FaultInjector {
  const plan: { command: string; fault: S3Fault; left: number }[] = [];
  const requests: S3Request[] = [];
  const middleware: DeserializeMiddleware<object, object> = (next, context) => async (args) => {
    const command = String(context.commandName ?? '');
    const index = plan.findIndex((p) => p.left > 0 && (p.command === '*' || p.command === command));
    const entry = index >= 0 ? plan[index] : undefined;
    requests.push({ command, input: { ...(args.input as object) }, faulted: entry !== undefined });
    if (!entry) return next(args);
    entry.left -= 1;
    if (entry.fault.kind === 'network') {
      throw Object.assign(new Error(`socket failure (${entry.fault.code})`), { code: entry.fault.code });
    }
    const isHead = (args.request as { method?: string }).method === 'HEAD';
    const body = isHead ? '' : s3ErrorXml(entry.fault.code, entry.fault.message ?? entry.fault.code);
    const response = new HttpResponse({
      statusCode: entry.fault.status,
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': 'FAKEREQUEST' },
      body: Readable.from([Buffer.from(body)]),
    });
    return { response, output: undefined as never };
  };
  client.middlewareStack.addRelativeTo(middleware as never, {
    relation: 'after',
    toMiddleware: 'deserializerMiddleware',
    name: 'harvesterS3Faults',
    override: true,
  });
  return {
    failNext(command, fault, times = 1) {
      plan.push({ command, fault, left: times });
    },
    requests,
    clear() {
      plan.length = 0;
      requests.length = 0;
    },
  };
}
