import { expect } from 'chai';
import { ERRORS, MAX_SEND_USERNAME_LOOKUPS, USERNAME_ERRORS } from '@mgw/contracts';
import { SEND_DESCRIPTION } from './send-description.js';

describe("SEND_DESCRIPTION: POST /send's description in the OpenAPI document", () => {
  it("When POST /send's description is read, then it names the contract's errors and the lookup bound it promises", () => {
    for (const said of [
      ERRORS.editWindowPassed,
      ERRORS.deleteWindowPassed,
      ERRORS.revisionTargetNotFound,
      USERNAME_ERRORS.notFound,
      USERNAME_ERRORS.pinRequired,
      `at most ${MAX_SEND_USERNAME_LOOKUPS}`,
    ])
      expect(SEND_DESCRIPTION).to.include(said);
  });
});
