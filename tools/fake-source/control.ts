import { z } from 'zod';
import { FakeSourceError } from './errors.js';
import { type LiveEditor, type LiveLog, type LiveSettings, liveSchema } from './live.js';
import type { TruthEntity } from './model.js';
import {
  FAULT_PROFILES,
  type FaultProfile,
  type FaultProfileName,
  faultProfileSchema,
  type ResolvedFaultProfile,
} from './profiles.js';
import type { ChangeResult, SourceState } from './state.js';
import type { StatsRecorder } from './stats.js';
import { type TraitOptions, type Traits, traitsSchema } from './traits/schema.js';

const profileNames = Object.keys(FAULT_PROFILES) as [FaultProfileName, ...FaultProfileName[]];
/** An entity id (`e-000007`) or, for the GitHub shape, an issue number (7). */
const refs = z.array(z.union([z.string().min(1), z.number().int().positive()]));

/**
 * A control command, as `POST /_control` takes it.
 *
 * @example { "action": "touch", "ids": ["e-000003", 4] }
 */
export const controlCommandSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('set-profile'),
    profile: z.union([z.enum(profileNames), faultProfileSchema]),
  }),
  z.strictObject({ action: z.literal('fix'), ids: refs.optional() }),
  z.strictObject({
    action: z.literal('touch'),
    ids: refs,
    tied: z.boolean().optional(),
    at: z.iso.datetime({ offset: true }).optional(),
  }),
  z.strictObject({ action: z.literal('set-live'), live: liveSchema.nullable() }),
  z.strictObject({ action: z.literal('delete'), ids: refs }),
  z.strictObject({ action: z.literal('restore'), ids: refs }),
  z.strictObject({ action: z.literal('transfer'), ids: refs }),
  z.strictObject({ action: z.literal('set-traits'), traits: traitsSchema }),
  z.strictObject({ action: z.literal('hide'), ids: refs }),
  z.strictObject({
    action: z.literal('resize'),
    ids: refs,
    bytes: z
      .number()
      .int()
      .min(0)
      .max(4 * 1_024 * 1_024),
  }),
  z.strictObject({ action: z.literal('add'), count: z.number().int().min(0).max(1_000_000) }),
  z.strictObject({ action: z.literal('reset-stats') }),
  z.strictObject({ action: z.literal('expire-cursors') }),
]);

/** A parsed control command. */
export type ControlCommand = z.infer<typeof controlCommandSchema>;

/** What a control command did; `POST /_control` answers it as JSON. */
export type ControlResult =
  | { readonly ok: true; readonly action: 'set-profile'; readonly profile: ResolvedFaultProfile }
  | { readonly ok: true; readonly action: 'fix' | 'reset-stats' | 'expire-cursors' }
  | {
      readonly ok: true;
      readonly action: 'touch' | 'delete' | 'restore' | 'resize' | 'hide' | 'transfer';
      readonly changed: readonly TruthEntity[];
      readonly unknownIds: readonly string[];
    }
  | { readonly ok: true; readonly action: 'add'; readonly added: readonly TruthEntity[] }
  | { readonly ok: true; readonly action: 'set-live'; readonly live: LiveSettings | null }
  | { readonly ok: true; readonly action: 'set-traits'; readonly traits: Traits };

/**
 * Changes the source while a run reads it, in process (`source.control`) or from another process
 * through `POST /_control` — both go through the same code.
 */
export interface FakeSourceControl {
  /** Switches fault profile; broken and not-found entities are chosen again from the seed. */
  setProfile(profile: FaultProfile | FaultProfileName): ResolvedFaultProfile;
  /** "The source was fixed": stops serving broken records and not-found items (all, or only `ids`). */
  fix(ids?: readonly (string | number)[]): void;
  /**
   * Modifies entities (by id or issue number): updatedAt past every other, version + 1; `tied`:
   * one shared updatedAt for all (a bulk edit, a tie group); `at`: stamped at that time exactly,
   * as a host whose clock runs hours ahead stamps its edits (the source's clock does not move).
   */
  touch(ids: readonly (string | number)[], options?: { tied?: boolean; at?: string }): ChangeResult;
  /** Deletes entities: they leave listings and item fetches. */
  delete(ids: readonly (string | number)[]): ChangeResult;
  /**
   * Brings deleted entities back at the version and `updatedAt` they had, as a restore from the
   * trash does in WordPress, Jira and Google Drive: listed and fetched again, nothing newer.
   */
  restore(ids: readonly (string | number)[]): ChangeResult;
  /** Moves entities to another repository or project: gone here, a fetch by id answers a redirect. */
  transfer(ids: readonly (string | number)[]): ChangeResult;
  /** Switches the source zoo's traits (see `traits/schema.ts`); hostile entities are chosen again. */
  setTraits(traits: TraitOptions): Traits;
  /** Takes entities out of listings only (a lagging listing index): fetching them by id still works. */
  hide(ids: readonly (string | number)[]): ChangeResult;
  /** Gives entities a body of `bytes` characters (too large to store, say) and touches them. */
  resize(ids: readonly (string | number)[], bytes: number): ChangeResult;
  /** Creates `count` entities, modified after every existing one. */
  add(count: number): readonly TruthEntity[];
  /** Turns the `live` behaviour on (edits before every listing request) or off (null). */
  setLive(live: Parameters<LiveEditor['set']>[0]): LiveSettings | null;
  /** What the `live` behaviour changed so far. */
  liveHistory(): LiveLog;
  /** Zeroes the stats (the benchmark measures one phase at a time). */
  resetStats(): void;
  /** Every `/records` cursor issued so far expires (see the `expireCursorsAfter` trait). */
  expireCursors(): void;
  /** Validates and applies a command given as JSON; throws {@link FakeSourceError} when it is invalid. */
  apply(command: unknown): ControlResult;
}

/** The control of one source. */
export function createControl(state: SourceState, stats: StatsRecorder, live: LiveEditor): FakeSourceControl {
  const control: FakeSourceControl = {
    setProfile: (profile) => state.setProfile(profile),
    fix: (ids) => state.fix(ids),
    touch: (ids, options) =>
      state.touch(ids, {
        ...(options?.tied ? { tied: true } : {}),
        ...(options?.at ? { atMs: Date.parse(options.at) } : {}),
      }),
    setLive: (settings) => live.set(settings),
    liveHistory: () => live.history(),
    delete: (ids) => state.delete(ids),
    restore: (ids) => state.restore(ids),
    transfer: (ids) => state.transfer(ids),
    setTraits: (traits) => state.traits.set(traits),
    resize: (ids, bytes) => state.resize(ids, bytes),
    hide: (ids) => state.hide(ids),
    add: (count) => state.add(count),
    resetStats: () => stats.reset(),
    expireCursors: () => state.traits.expireCursors(),
    apply(input) {
      const parsed = controlCommandSchema.safeParse(input);
      if (!parsed.success)
        throw new FakeSourceError(`invalid control command: ${z.prettifyError(parsed.error)}`);
      return run(control, parsed.data);
    },
  };
  return control;
}

function run(control: FakeSourceControl, command: ControlCommand): ControlResult {
  switch (command.action) {
    case 'set-profile':
      return { ok: true, action: command.action, profile: control.setProfile(command.profile) };
    case 'fix':
      control.fix(command.ids);
      return { ok: true, action: command.action };
    case 'reset-stats':
      control.resetStats();
      return { ok: true, action: command.action };
    case 'expire-cursors':
      control.expireCursors();
      return { ok: true, action: command.action };
    case 'touch':
      return {
        ok: true,
        action: command.action,
        ...control.touch(command.ids, {
          ...(command.tied ? { tied: true } : {}),
          ...(command.at ? { at: command.at } : {}),
        }),
      };
    case 'set-live':
      return { ok: true, action: command.action, live: control.setLive(command.live) };
    case 'delete':
      return { ok: true, action: command.action, ...control.delete(command.ids) };
    case 'restore':
      return { ok: true, action: command.action, ...control.restore(command.ids) };
    case 'transfer':
      return { ok: true, action: command.action, ...control.transfer(command.ids) };
    case 'set-traits':
      return { ok: true, action: command.action, traits: control.setTraits(command.traits) };
    case 'hide':
      return { ok: true, action: command.action, ...control.hide(command.ids) };
    case 'resize':
      return { ok: true, action: command.action, ...control.resize(command.ids, command.bytes) };
    case 'add':
      return { ok: true, action: command.action, added: control.add(command.count) };
  }
}
