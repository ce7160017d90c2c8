import { expect } from 'chai';
import {
  cloudBody,
  cloudReasonWords,
  formFailure,
  linkedByCode,
  qualityOf,
  refusedFields,
  tierWords,
  withoutSecrets,
} from './cloud-form';

/** The Cloud API section's logic without a browser: the body it sends, the fields a refusal marks. */
describe('console: the Cloud API form (cloud-form.ts)', () => {
  const typed = {
    phoneNumberId: ' 100000000000001 ',
    wabaId: '200000000000001',
    accessToken: 'EAAtoken-value\n',
    appSecret: ' app-secret ',
    verifyToken: 'verify-me',
    throughputPerSecond: '',
    graphVersion: '',
    otpTemplate: '',
  };

  it('When the optional fields are empty, then the body is the five trimmed fields the API needs', () => {
    expect(cloudBody(typed)).to.deep.equal({
      phoneNumberId: '100000000000001',
      wabaId: '200000000000001',
      accessToken: 'EAAtoken-value',
      appSecret: 'app-secret',
      verifyToken: 'verify-me',
    });
    expect(
      cloudBody({ ...typed, throughputPerSecond: ' 20 ', graphVersion: 'v22.0', otpTemplate: 'otp_ar' }),
    ).to.deep.include({ throughputPerSecond: 20, graphVersion: 'v22.0', otpTemplate: 'otp_ar' });
  });

  it("When the throughput is not a whole number, then the text goes as typed, for the API's 400 to name the field", () => {
    for (const text of ['1.5', '-3', '80 msg', '1e3'])
      expect(cloudBody({ ...typed, throughputPerSecond: text }).throughputPerSecond).to.equal(text);
  });

  it('When a request leaves, then what the form keeps has no secret, and the ids and settings stay', () => {
    const kept = withoutSecrets({ ...typed, throughputPerSecond: '20' });
    expect(kept).to.deep.equal({
      ...typed,
      throughputPerSecond: '20',
      accessToken: '',
      appSecret: '',
      verifyToken: '',
    });
  });

  it("When the API's details name fields, then the form's are marked with the first message each, and anything else is left out", () => {
    expect(
      refusedFields([
        { path: ['accessToken'], message: 'Meta (error 190/467): Invalid OAuth access token' },
        { path: ['accessToken'], message: 'a second word on it' },
        {
          path: ['throughputPerSecond'],
          message: '"throughputPerSecond" must be less than or equal to 1000',
        },
        { path: ['engine'], message: '"engine" is not allowed' },
        { path: [], message: 'about the whole request' },
        { path: ['__proto__'], message: 'hostile' },
        { path: ['constructor'], message: 'hostile' },
        { path: 'phoneNumberId', message: 'not a path' },
        { path: ['wabaId'], message: 42 },
        null,
        'text',
      ]),
    ).to.deep.equal({
      accessToken: 'Meta (error 190/467): Invalid OAuth access token',
      throughputPerSecond: '"throughputPerSecond" must be less than or equal to 1000',
    });
    for (const none of [undefined, null, 'x', {}, 7]) expect(refusedFields(none)).to.deep.equal({});
  });

  it("When every detail of a refusal is shown at its field, then the message next to the form is the API's error alone; otherwise the whole message", () => {
    const error = "The Graph API refused the device's Cloud API credentials";
    const whole = `${error}: Meta (error 190/467): Invalid OAuth access token`;
    const meta = [{ path: ['accessToken'], message: 'Meta (error 190/467): Invalid OAuth access token' }];
    expect(formFailure(error, meta, whole)).to.equal(`${error}: see the field marked above.`);
    // A detail about no field (Meta's code named none), or two on one field: all of it in the message.
    expect(formFailure(error, [{ path: [], message: 'Meta (error 100): odd' }], whole)).to.equal(whole);
    expect(formFailure(error, [...meta, { path: ['accessToken'], message: 'again' }], whole)).to.equal(whole);
    expect(formFailure('Another device already is this Cloud API phone number', undefined, 'msg.')).to.equal(
      'msg.',
    );
    expect(formFailure(undefined, meta, whole)).to.equal(whole);
  });

  it('When a device is linked by QR or code, or being linked, then it cannot be made a Cloud API number; otherwise it can', () => {
    expect(linkedByCode({ engine: 'linked', linked: true, status: 'connected' })).to.equal(true);
    expect(linkedByCode({ engine: 'linked', linked: true, status: 'disconnected' })).to.equal(true);
    expect(linkedByCode({ engine: 'linked', linked: false, status: 'connecting' })).to.equal(true);
    expect(linkedByCode({ engine: 'linked', linked: false, status: 'disconnected' })).to.equal(false);
    expect(linkedByCode({ engine: 'cloud', linked: true, status: 'connected' })).to.equal(false);
  });

  it("When Meta's quality, tier or a reason is shown, then it is in words, and an unknown one as it came", () => {
    expect(qualityOf('GREEN')).to.deep.equal({ words: 'High (green)', band: 'connected' });
    expect(qualityOf('YELLOW').band).to.equal('connecting');
    expect(qualityOf('RED').band).to.equal('failed');
    expect(qualityOf('UNKNOWN')).to.deep.equal({ words: 'Not rated yet', band: '' });
    expect(qualityOf('PURPLE')).to.deep.equal({ words: 'PURPLE', band: '' });
    expect(tierWords('TIER_1K')).to.equal('1,000 new contacts / 24 h');
    expect(tierWords('TIER_UNLIMITED')).to.equal('unlimited new contacts');
    expect(tierWords(undefined)).to.equal('not given by Meta');
    expect(tierWords('constructor')).to.equal('constructor');
    expect(cloudReasonWords('cloud_token_expired')).to.match(/^Meta refused the access token/);
    expect(cloudReasonWords('toString')).to.equal('toString');
    expect(cloudReasonWords('some_new_reason')).to.equal('some new reason');
  });
});
