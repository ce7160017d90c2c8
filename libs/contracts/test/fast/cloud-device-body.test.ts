import { expect } from 'chai';
import {
  CLOUD_LIMITS,
  MAX_CLOUD_THROUGHPUT_PER_SECOND,
  cloudDeviceBodySchema,
  validate,
  type CloudDeviceInput,
} from '../../src/index.js';

const GOOD: CloudDeviceInput = {
  phoneNumberId: '106540352242922',
  wabaId: '102290129340398',
  accessToken: 'EAAJB0abcdefGHIJ1234',
  appSecret: '0123456789abcdef0123456789abcdef',
  verifyToken: 'my-verify-token',
};

/** The details of a body, or undefined when it passes. */
const refused = (body: unknown) => validate(cloudDeviceBodySchema, body).details;

describe('contracts: the body that makes a device a Cloud API number (cloud-device-body.ts)', () => {
  it('When the five required fields are given, then it passes; the three settings are optional and bounded', () => {
    expect(refused(GOOD)).to.equal(undefined);
    expect(
      refused({ ...GOOD, throughputPerSecond: 1, graphVersion: 'v22.0', otpTemplate: 'login_code_2' }),
    ).to.equal(undefined);
    expect(refused({ ...GOOD, throughputPerSecond: MAX_CLOUD_THROUGHPUT_PER_SECOND })).to.equal(undefined);
  });

  it('When a required field is missing, then each is named', () => {
    for (const field of Object.keys(GOOD) as (keyof CloudDeviceInput)[]) {
      const { [field]: _gone, ...rest } = GOOD;
      expect(refused(rest), field).to.deep.equal([{ path: [field], message: `${field} is required` }]);
    }
  });

  it('When an id is not digits (a phone number with +, letters, too long), then it is refused naming the field', () => {
    for (const id of ['+15550100001', 'abc', '12 34', '1'.repeat(33), '', 123]) {
      const details = refused({ ...GOOD, phoneNumberId: id });
      expect(details, String(id)).to.have.length(1);
      expect(details![0]!.path).to.deep.equal(['phoneNumberId']);
      expect(refused({ ...GOOD, wabaId: id })![0]!.path).to.deep.equal(['wabaId']);
    }
  });

  it('When a secret is empty, too long, has a space, a control, a non-ASCII or a lone surrogate, then it is refused without repeating it', () => {
    const bad = (max: number) => [
      '',
      'x'.repeat(max + 1),
      'has space',
      'line\nbreak',
      'tab\tbed',
      'nul\u0000',
      'caf\u00e9',
      'rtl\u202e',
      'half\ud800',
      42,
      null,
      ['a'],
    ];
    for (const field of ['accessToken', 'appSecret', 'verifyToken'] as const) {
      for (const value of bad(CLOUD_LIMITS[field])) {
        const details = refused({ ...GOOD, [field]: value });
        expect(details, `${field} ${JSON.stringify(value)}`).to.have.length(1);
        expect(details![0]!.path).to.deep.equal([field]);
        if (typeof value === 'string' && value.length > 3)
          expect(details![0]!.message, `${field} ${JSON.stringify(value)}`).to.not.include(value);
      }
      expect(refused({ ...GOOD, [field]: 'x'.repeat(CLOUD_LIMITS[field]) }), field).to.equal(undefined);
    }
  });

  it('When a setting is out of its bounds, then it is refused naming it', () => {
    const cases: [keyof CloudDeviceInput, unknown][] = [
      ['throughputPerSecond', 0],
      ['throughputPerSecond', MAX_CLOUD_THROUGHPUT_PER_SECOND + 1],
      ['throughputPerSecond', 1.5],
      ['throughputPerSecond', '80x'],
      ['graphVersion', '21.0'],
      ['graphVersion', 'v21'],
      ['graphVersion', 'v1234.0'],
      ['otpTemplate', 'Verification_Code'],
      ['otpTemplate', 'with space'],
      ['otpTemplate', 'x'.repeat(513)],
      ['otpTemplate', ''],
    ];
    for (const [field, value] of cases) {
      const details = refused({ ...GOOD, [field]: value });
      expect(details, `${field} ${JSON.stringify(value)}`).to.have.length(1);
      expect(details![0]!.path).to.deep.equal([field]);
    }
  });

  it('When the body has an unknown field, or is no object, then it is refused', () => {
    expect(refused({ ...GOOD, engine: 'cloud' })![0]!.path).to.deep.equal(['engine']);
    for (const body of [null, [], 'x', 1])
      expect(refused(body), JSON.stringify(body)).to.not.equal(undefined);
  });
});
