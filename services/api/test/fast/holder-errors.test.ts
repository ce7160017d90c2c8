import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import type { HolderOutcome } from '../../src/features/holder/ask-holder.js';
import { ApiError } from '../../src/http/api-error.js';
import { NO_DEVICE, answer, invalidAt, type HolderErrors } from '../../src/http/holder-errors.js';

/** A capability's map, as a routes file gives it. */
const ERRORS_OF_A_CAPABILITY: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: 'took too long' },
  not_connected: { status: 502, error: 'not now' },
  failed: { status: 502, error: 'it failed' },
  codes: {
    'not-admin': { status: 403, error: 'admins only' },
    'bad-picture': invalidAt('picture', 'not a picture'),
  },
};

/** The body `answer` throws for `outcome`. */
function thrown(outcome: HolderOutcome<unknown>): { status: number; body: Record<string, unknown> } {
  try {
    answer(outcome, ERRORS_OF_A_CAPABILITY);
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return { status: (err as ApiError).status, body: (err as ApiError).body() };
  }
  throw new Error('answer did not throw');
}

describe("answer: an ask's outcome in HTTP, through its capability's map", () => {
  it('When the holder answered, then its data is the answer', () => {
    expect(answer({ ok: true, data: { groups: [] } }, ERRORS_OF_A_CAPABILITY)).to.deep.equal({ groups: [] });
    expect(answer({ ok: true, data: undefined }, ERRORS_OF_A_CAPABILITY)).to.equal(undefined);
  });

  it('When the ask failed, then each reason is the status and error string the map gives, without details', () => {
    expect(thrown({ ok: false, reason: 'no_device' })).to.deep.equal({
      status: 409,
      body: { success: false, error: ERRORS.noDevice },
    });
    expect(thrown({ ok: false, reason: 'timeout' })).to.deep.equal({
      status: 504,
      body: { success: false, error: 'took too long' },
    });
    expect(thrown({ ok: false, reason: 'not_connected' })).to.deep.equal({
      status: 502,
      body: { success: false, error: 'not now' },
    });
    expect(thrown({ ok: false, reason: 'failed' })).to.deep.equal({
      status: 502,
      body: { success: false, error: 'it failed' },
    });
  });

  it("When the holder failed with one of the capability's codes, then that code's error, details included", () => {
    expect(thrown({ ok: false, reason: 'failed', code: 'not-admin' })).to.deep.equal({
      status: 403,
      body: { success: false, error: 'admins only' },
    });
    expect(thrown({ ok: false, reason: 'failed', code: 'bad-picture' })).to.deep.equal({
      status: 400,
      body: {
        success: false,
        error: ERRORS.invalidRequest,
        details: [{ path: ['picture'], message: 'not a picture' }],
      },
    });
  });

  it("When the code is none of the map (another capability's, or a name of every object), then it is said as failed", () => {
    for (const code of ['no-key', 'constructor', '__proto__', 'toString', 'hasOwnProperty'])
      expect(thrown({ ok: false, reason: 'failed', code }), code).to.deep.equal({
        status: 502,
        body: { success: false, error: 'it failed' },
      });
  });
});
