import { z } from 'zod';
import type { TruthEntity } from './model.js';
import { mulberry32 } from './prng.js';
import type { SourceState } from './state.js';

/**
 * The `live` behaviour: the source changes while a run reads it, as every live repository does
 * during a long sync. Before each listing request (a `page` route) it edits, adds and deletes
 * entities at the configured rate, so a harvest that pages by position over a modification-ordered
 * listing visibly loses entities. Edits are driven by listing requests, not by wall time, so a
 * seed reproduces the same interleaving however fast the reader is.
 */
export const liveSchema = z.strictObject({
  /** Entities modified before every listing request (updatedAt past every other, version + 1). Default 1. */
  touchesPerPage: z.number().int().min(0).max(10_000).default(1),
  /** Entities created before every listing request. Default 0. */
  addsPerPage: z.number().int().min(0).max(10_000).default(0),
  /** Entities deleted before every listing request. Default 0. */
  deletesPerPage: z.number().int().min(0).max(10_000).default(0),
  /** Edit before one listing request in this many (1: every one). Default 1. */
  everyRequests: z.number().int().min(1).default(1),
  /** Stop after this many changes in all (touches + adds + deletes). Default unbounded. */
  maxChanges: z.number().int().min(0).optional(),
  /** Give the entities touched before one request one shared updatedAt (a bulk edit: a tie group). Default false. */
  tied: z.boolean().default(false),
});

/** The `live` settings as given (`startFakeSource({ live })`, `{"action":"set-live"}`). */
export type LiveOptions = z.input<typeof liveSchema>;
/** The `live` settings with defaults applied. */
export type LiveSettings = z.output<typeof liveSchema>;

/** What the live behaviour changed so far: the ground truth keeps the current state, this keeps the history. */
export interface LiveLog {
  readonly touched: readonly TruthEntity[];
  readonly added: readonly TruthEntity[];
  readonly deleted: readonly string[];
}

/** Applies live changes to one source's state. */
export class LiveEditor {
  private settings: LiveSettings | null = null;
  private requests = 0;
  private changes = 0;
  private random: () => number;
  private readonly log = {
    touched: [] as TruthEntity[],
    added: [] as TruthEntity[],
    deleted: [] as string[],
  };

  constructor(
    private readonly state: SourceState,
    seed: number,
  ) {
    this.random = mulberry32(seed ^ 0x11fe);
  }

  /** Turns live changes on (settings) or off (null). The request counter restarts. */
  set(options: LiveOptions | null): LiveSettings | null {
    this.settings = options === null ? null : liveSchema.parse(options);
    this.requests = 0;
    return this.settings;
  }

  /** Everything changed so far. */
  history(): LiveLog {
    return { touched: [...this.log.touched], added: [...this.log.added], deleted: [...this.log.deleted] };
  }

  /** Called before each listing request is answered. */
  beforeListing(): void {
    const settings = this.settings;
    if (!settings) return;
    this.requests += 1;
    if ((this.requests - 1) % settings.everyRequests !== 0) return;
    const budget = () =>
      settings.maxChanges === undefined ? Number.POSITIVE_INFINITY : settings.maxChanges - this.changes;
    const pick = (count: number) => {
      const live = this.state.store.live();
      const chosen = new Set<string>();
      for (let i = 0; i < count * 4 && chosen.size < Math.min(count, live.length); i++) {
        chosen.add(live[Math.floor(this.random() * live.length)]!.id);
      }
      return [...chosen];
    };
    const touches = Math.min(settings.touchesPerPage, budget());
    if (touches > 0) {
      const result = this.state.touch(pick(touches), { tied: settings.tied });
      this.log.touched.push(...result.changed);
      this.changes += result.changed.length;
    }
    const deletes = Math.min(settings.deletesPerPage, budget());
    if (deletes > 0) {
      const result = this.state.delete(pick(deletes));
      this.log.deleted.push(...result.changed.map((e) => e.id));
      this.changes += result.changed.length;
    }
    const adds = Math.min(settings.addsPerPage, budget());
    if (adds > 0) {
      const added = this.state.add(adds);
      this.log.added.push(...added);
      this.changes += added.length;
    }
  }
}
