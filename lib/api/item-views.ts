import type { z } from 'zod';
import { RUN_MODES, type RunMode } from '../run/model.js';
import type { StoredItem } from '../store/items.js';
import { iso } from './schemas/common.js';
import type { ItemViewSchema } from './schemas/items.js';

/** An item as the API shows it (schema `Item`). */
export type ItemView = z.infer<typeof ItemViewSchema>;

function modeOf(value: string | undefined): RunMode | null {
  return RUN_MODES.find((mode) => mode === value) ?? null;
}

/**
 * The API view of a stored item: ISO times, its provenance. Rows written before provenance was
 * recorded say what they can (the run that wrote them, when) and null for the rest.
 */
export function toItemView(item: StoredItem): ItemView {
  const p = item.provenance;
  return {
    sourceId: item.sourceId,
    entityId: item.entityId,
    version: item.version,
    data: item.data,
    changedAt: iso(item.changedAt),
    tombstonedAt: iso(item.tombstonedAt),
    tombstonedBy: item.tombstonedBy ?? null,
    provenance: {
      runId: p?.runId ?? item.runId,
      mode: modeOf(p?.mode),
      page: p?.page ?? null,
      window: p?.window ?? null,
      fetchedAt: iso(p?.fetchedAt),
      request: p?.request ?? null,
      storedAt: iso(item.syncedAt)!,
      firstRunId: item.firstRunId ?? null,
    },
  };
}
