/** A mistake in the command line the API never sees (unreadable --config, a bad --schedule). */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}
