import { ERRORS, type ValidationDetail } from '@mgw/contracts';
import type { HolderOutcome, HolderReason } from '../features/holder/ask-holder.js';
import { ApiError } from './api-error.js';

/** One failure of an ask in HTTP: the contract's status, error string and details. */
export interface HolderError {
  status: number;
  error: string;
  details?: ValidationDetail[];
}

/**
 * How a capability says the failures of its asks (features/holder/ask-holder.ts) in HTTP: one
 * error for each reason, and for the reply error codes of its own commands (a `failed` reply with
 * a code not listed here is said as `failed`). The map lives with the capability's routes.
 */
export type HolderErrors = Record<HolderReason, HolderError> & {
  codes?: Readonly<Record<string, HolderError>>;
};

/** A device not connected, or held by nobody: what most capabilities answer for `no_device`. */
export const NO_DEVICE: HolderError = { status: 409, error: ERRORS.noDevice };

/** A 400 naming the request field at `path`, as ApiError.invalid says it. */
export function invalidAt(path: string, message: string): HolderError {
  return { status: 400, error: ERRORS.invalidRequest, details: [{ path: [path], message }] };
}

/** The holder's answer, or the ApiError the capability's map gives for how the ask failed. */
export function answer<T>(outcome: HolderOutcome<T>, errors: HolderErrors): T {
  if (outcome.ok) return outcome.data;
  const { codes } = errors;
  // Own keys only: a reply's error is the holder's text, and no code may reach Object's members.
  const coded =
    outcome.reason === 'failed' && outcome.code !== undefined && codes && Object.hasOwn(codes, outcome.code)
      ? codes[outcome.code]
      : undefined;
  const { status, error, details } = coded ?? errors[outcome.reason];
  throw new ApiError(status, error, details);
}
