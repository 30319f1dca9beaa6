import { hash32, mulberry32 } from './prng.js';

// A small vocabulary is enough: the text only has to look like prose and differ per entity,
// so that loads which drop or swap a body are caught by content comparisons.
const WORDS = [
  'sync',
  'page',
  'cursor',
  'retry',
  'queue',
  'worker',
  'timeout',
  'token',
  'webhook',
  'schema',
  'index',
  'cache',
  'deploy',
  'region',
  'latency',
  'backlog',
  'release',
  'crash',
  'heartbeat',
  'checkpoint',
  'import',
  'export',
  'report',
  'dashboard',
  'budget',
  'migration',
  'label',
  'search',
  'upload',
  'archive',
  'billing',
  'invite',
  'profile',
  'locale',
  'audit',
  'metric',
  'alert',
  'batch',
] as const;

const VERBS = ['fails', 'stalls', 'duplicates', 'skips', 'breaks', 'slows down', 'loops', 'drops'] as const;

function pick<T>(list: readonly T[], random: () => number): T {
  return list[Math.floor(random() * list.length)]!;
}

function sentence(random: () => number): string {
  const words = Array.from({ length: 4 + Math.floor(random() * 6) }, () => pick(WORDS, random));
  const text = words.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** Deterministic title and body of one entity: the same seed and number always give the same text. */
export interface EntityText {
  readonly title: string;
  readonly body: string;
}

/**
 * The text of entity `number` under `seed`.
 *
 * @example entityText(42, 7).title // e.g. "Checkpoint stalls after deploy (#7)"
 */
export function entityText(seed: number, number: number): EntityText {
  const random = mulberry32(hash32(seed, 'text', number));
  const subject = pick(WORDS, random);
  const title = `${subject.charAt(0).toUpperCase()}${subject.slice(1)} ${pick(VERBS, random)} after ${pick(WORDS, random)} (#${number})`;
  const body = Array.from({ length: 2 + Math.floor(random() * 3) }, () => sentence(random)).join(' ');
  return { title, body };
}
