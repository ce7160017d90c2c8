import { expect } from 'chai';
import { CLOUD_WEBHOOK_PATH as CONTRACT_PATH, cloudDeviceBodySchema } from '@mgw/contracts';

/** The form's module, loaded at run time: its imports are the bundler's (no extensions), not Node's. */
const FORM = '../../src/cloud/cloud-form.js';
const { CLOUD_FIELDS, CLOUD_WEBHOOK_PATH, EMPTY_CLOUD_FORM } = (await import(FORM)) as {
  CLOUD_FIELDS: { field: string; secret?: boolean }[];
  CLOUD_WEBHOOK_PATH: string;
  EMPTY_CLOUD_FORM: Record<string, string>;
};

/**
 * The Cloud API form (src/cloud/cloud-form.ts) runs in the browser, without @mgw/contracts: its copy
 * of the API's body and of the Meta endpoint's path is held against the contract's here, in the
 * fast lane (under test/, in the Node program, which alone resolves @mgw/contracts from its sources).
 */
describe('console: the Cloud API form against the contract', () => {
  it("When the form is compared with the API's body, then it has exactly the body's fields, and the webhook path is the contract's", () => {
    const keys = Object.keys(cloudDeviceBodySchema.describe().keys as Record<string, unknown>);
    expect(CLOUD_FIELDS.map((f) => f.field)).to.have.members(keys);
    expect(Object.keys(EMPTY_CLOUD_FORM)).to.have.members(keys);
    expect(CLOUD_FIELDS.filter((f) => f.secret).map((f) => f.field)).to.deep.equal([
      'accessToken',
      'appSecret',
      'verifyToken',
    ]);
    expect(CLOUD_WEBHOOK_PATH).to.equal(CONTRACT_PATH);
  });
});
