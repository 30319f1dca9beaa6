/**
 * The fault-injecting fake source: an HTTP server imitating a rest-json API, GitHub's issues API
 * and GitLab's, with deterministic faults, for integration tests, the demo, the chaos suite and the
 * benchmark. Start one with {@link startFakeSource}.
 */

export { fakeRestConfig } from './connector-config.js';
export {
  type ControlCommand,
  type ControlResult,
  controlCommandSchema,
  type FakeSourceControl,
} from './control.js';
export { FakeSourceError } from './errors.js';
export { type FaultDecision, FaultInjector, RATE_LIMIT_QUOTA, TRANSIENT_STATUSES } from './faults.js';
export { GITHUB_DEFAULT_PER_PAGE, GITHUB_MAX_PER_PAGE, githubTime } from './github.js';
export {
  GITLAB_COUNT_LIMIT,
  GITLAB_DEFAULT_PER_PAGE,
  GITLAB_MAX_PER_PAGE,
  GITLAB_PROJECT_ID,
} from './gitlab.js';
export { type LiveLog, type LiveOptions, type LiveSettings, liveSchema } from './live.js';
export { entityId, type TruthEntity } from './model.js';
export {
  FAULT_PROFILES,
  type FaultOverride,
  type FaultProfile,
  type FaultProfileName,
  faultProfileSchema,
  isProfileName,
  PROFILE_DEFAULTS,
  type ResolvedFaultProfile,
  resolveProfile,
} from './profiles.js';
export { type QuotaVerdict, requestToken, SharedQuota, type SharedQuotaOptions } from './quota.js';
export { decodeCursor, encodeCursor, MAX_LIMIT, type RestRecord } from './records.js';
export { type FakeSource, type FakeSourceOptions, startFakeSource } from './server.js';
export type { ChangeResult, GroundTruth } from './state.js';
export type { RouteName, Stats } from './stats.js';
export { DEEP_NESTING, type HostileValue, hostileFor } from './traits/bodies.js';
export { longRecordId } from './traits/ids.js';
export {
  HOSTILE_KINDS,
  type HostileKind,
  NO_TRAITS,
  type TraitOptions,
  type Traits,
  traitsSchema,
} from './traits/schema.js';
export type { TraitTruth } from './traits/state.js';
export { TRANSFERRED_REPO_SUFFIX } from './traits/transfers.js';
