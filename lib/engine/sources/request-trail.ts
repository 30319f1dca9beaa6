import { redactUrl } from '../../connectors/redact-url.js';
import type { ItemProvenance } from '../../store/item-provenance.js';
import type { StepContext } from '../step/context.js';

/**
 * The last source request of a fetch that the source answered with success: the request whose
 * response the connector turned into the page (a keyset re-list or a redirect hop earlier in the
 * same fetch answers first, and is overwritten). Kept redacted, as it will be stored.
 */
export interface RequestTrail {
  url: string | null;
  at: number | null;
}

/** An empty trail, for one page's fetch (its retries included: the successful attempt writes last). */
export function newRequestTrail(): RequestTrail {
  return { url: null, at: null };
}

/** Wraps a fetch so every successful answer is written to `trail`. */
export function recordingFetch(fetch: typeof globalThis.fetch, trail: RequestTrail, now: () => number) {
  return async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    if (response.ok) {
      const asked = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      trail.url = redactUrl(response.url || asked);
      trail.at = now();
    }
    return response;
  };
}

/**
 * The provenance of the entities a step stores: its run, page and window, and the source request
 * that answered (none for sources reached through an SDK, or a write that no single request served).
 */
export function stepProvenance(context: StepContext, trail?: RequestTrail): ItemProvenance {
  const { run, message, partition, deps } = context;
  return {
    runId: run.runId,
    mode: run.mode,
    page: message.page,
    window: partition ? { from: partition.window.from, until: partition.window.until } : null,
    fetchedAt: trail?.at ?? deps.clock.now(),
    // The URL as sent may carry a secret in a parameter no name marks as a credential.
    request: trail?.url ? context.scrubber.scrub(trail.url) : null,
  };
}
