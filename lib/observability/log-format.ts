/** How log lines print: one JSON object per line (Lambda, pipes) or a line a person reads. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The environment variable that chooses the format (`--log-format` sets it for worker processes). */
export const LOG_FORMAT_ENV = 'HARVESTER_LOG_FORMAT';
