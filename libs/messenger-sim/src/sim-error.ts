/** An operation refused for a reason the caller can fix; the control API maps it to a 4xx. */
export class SimError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SimError';
  }
}
