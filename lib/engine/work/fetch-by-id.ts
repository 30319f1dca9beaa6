import type { Normalized } from '../../connectors/contract.js';
import { goneReason, isGone } from '../../connectors/gone.js';
import type { RetryOutcome } from '../../retry/outcome.js';
import { connectorContext } from '../sources/connector-context.js';
import type { StepContext } from '../step/context.js';
import { retryOwned } from './page-work.js';

/**
 * What a fetch by id may conclude, for the two places that fetch entities one at a time:
 * retry-failed (an item's dead letter) and reconciliation (an absence to confirm).
 *
 * An answer counts only if it is the record asked for. The connector checks what only it can
 * read (the repository or project the record lives in: a transferred GitHub issue is answered
 * by a redirect to another repository's issue) and says `EntityGoneError`; here every answer is
 * checked for its id as well, whatever the connector, since storing it under its own id would
 * overwrite another entity and leave the one asked for untouched.
 */
export type ById =
  /** The source says the entity no longer exists here (404/410, or it moved away); `how` says which. */
  | { readonly kind: 'gone'; readonly how: string }
  /** The source answered with the record asked for; `normalized` judges whether it can be stored. */
  | { readonly kind: 'found'; readonly raw: unknown; readonly normalized: Normalized };

/** Fetches entity `id` under the retry loop; an answer for another id is `gone`. */
export async function fetchById(context: StepContext, id: string): Promise<RetryOutcome<ById>> {
  const { connector, config } = context;
  return retryOwned(context, async (): Promise<ById> => {
    let raw: unknown;
    try {
      raw = await connector.fetchItem(config, id, connectorContext(context, null));
    } catch (error) {
      if (isGone(error)) return { kind: 'gone', how: goneReason(error) };
      throw error;
    }
    const normalized = connector.normalize(config, raw);
    const answered = normalized.ok ? normalized.entity.id : normalized.ref;
    if (answered !== null && answered !== id) {
      return {
        kind: 'gone',
        how: `the source answered a fetch of \`${id}\` with another record (\`${answered}\`): it is no longer here`,
      };
    }
    return { kind: 'found', raw, normalized };
  });
}
