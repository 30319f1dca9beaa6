/**
 * The fake source's one error: a bad option, an unknown profile name, an invalid control command.
 * Control requests over HTTP turn it into a 400 with its message.
 */
export class FakeSourceError extends Error {
  override readonly name = 'FakeSourceError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
