/** A caller mistake on the control side (an unknown number, a bad value): its HTTP status. */
export class CloudSimError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
