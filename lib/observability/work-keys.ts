/** Log fields that identify a piece of work; every engine log line carries them. */
export interface WorkKeys {
  readonly runId?: string;
  readonly sourceId?: string;
  readonly epoch?: number;
  readonly page?: number;
  /** The partition of a partitioned run the page belongs to. */
  readonly partition?: number;
}

/** The work keys, in the order every log line prints them (JSON and pretty alike). */
export const WORK_KEYS = [
  'runId',
  'sourceId',
  'epoch',
  'page',
  'partition',
] as const satisfies readonly (keyof WorkKeys)[];
