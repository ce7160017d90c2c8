import { expect } from 'chai';
import { CLOUD_WINDOW_MS, keys, type CloudDeviceConfig, type DeviceEngine } from '@mgw/contracts';
import { GraphError } from '@mgw/cloud';
import { MemoryRedis } from '../test-support.js';
import { cloudOtpTemplate, cloudSendRefusal, type CloudSendDeps } from './cloud-send.js';
import { EngineCache } from './engine-cache.js';
import type { CatalogEntry } from './template-catalog.js';

const NOW = 1_800_000_000_000;
const config: CloudDeviceConfig = {
  phoneNumberId: '1001',
  wabaId: '2001',
  accessToken: 'token',
  appSecret: 'secret',
  verifyToken: 'verify',
  throughputPerSecond: 80,
  graphVersion: 'v21.0',
  otpTemplate: 'verification_code',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const otpEntry = (language: string, status = 'APPROVED'): CatalogEntry => ({
  name: 'verification_code',
  language,
  status,
  category: 'AUTHENTICATION',
  params: { body: 1, buttons: { 0: 1 } },
  components: [],
});

describe('cloudSendRefusal and cloudOtpTemplate: the Cloud API’s rules at accept time', () => {
  let redis: MemoryRedis;
  let engine: DeviceEngine;
  let catalog: CatalogEntry[] | Error;
  let warnings: [string, unknown][];
  let deps: CloudSendDeps;
  beforeEach(() => {
    redis = new MemoryRedis();
    engine = 'cloud';
    catalog = [];
    warnings = [];
    deps = {
      redis: redis.client,
      engines: new EngineCache({ engineOf: async () => engine }),
      cloudDevices: { get: async () => (engine === 'cloud' ? config : undefined) },
      templates: {
        named: async () => {
          if (catalog instanceof Error) throw catalog;
          return catalog;
        },
      },
      logger: { warn: (message: string, fields?: unknown) => void warnings.push([message, fields]) },
    };
  });
  const freeForm = (to: string, isList = false) =>
    cloudSendRefusal(deps, 'd1', { to: isList ? [to] : to }, NOW);

  it('When a linked device sends free-form, then nothing is refused, and once its engine is known the answer is no promise', async () => {
    engine = 'linked';
    expect(await freeForm('15550001111')).to.equal(undefined);
    expect(freeForm('15550001111')).to.equal(undefined);
  });

  it('When a cloud device sends free-form to one contact, then it goes inside the 24-hour window only', async () => {
    redis.zset(keys.cloudWindows('d1'), { '15550001111': NOW - 1000, '15550002222': NOW - CLOUD_WINDOW_MS });
    expect(await freeForm('15550001111')).to.equal(undefined);
    expect(await freeForm('15550002222')).to.deep.equal({
      kind: 'refused',
      reason: 'window_closed',
      recipient: '15550002222',
    });
    expect(await freeForm('15550003333')).to.deep.include({ reason: 'window_closed' });
  });

  it('When a cloud device sends free-form to a list, then nothing is refused here: the sender fails the closed windows one by one', async () => {
    expect(await freeForm('15550003333', true)).to.equal(undefined);
  });

  it('When a template goes to a linked device, or its list cannot be read, then it is refused; an approved one passes whatever the window', async () => {
    const template = { name: 'verification_code', language: 'en_US' };
    const send = () => cloudSendRefusal(deps, 'd1', { template, to: '15550003333' }, NOW);
    engine = 'linked';
    expect(await send()).to.deep.equal({ kind: 'refused', reason: 'template_on_linked_device' });
    engine = 'cloud';
    catalog = new GraphError(401, 190, 'Error validating access token', 463, undefined, 'trace-1');
    expect(await send()).to.deep.equal({ kind: 'refused', reason: 'template_catalog_unavailable' });
    // The operator learns why, by Meta's code and trace id (never the token).
    expect(warnings).to.deep.equal([
      [
        "cloud: the number's templates could not be read from the Graph API",
        { deviceId: 'd1', status: 401, code: 190, subcode: 463, fbtraceId: 'trace-1' },
      ],
    ]);
    catalog = [{ ...otpEntry('en_US'), params: {} }];
    expect(await send()).to.equal(undefined);
  });

  it("When an OTP goes through a cloud device, then its template is the device's in en_US (else en) or ar, with the code twice", async () => {
    catalog = [otpEntry('en_US'), otpEntry('ar')];
    expect(await cloudOtpTemplate(deps, 'd1', '123456', 'English')).to.deep.equal({
      name: 'verification_code',
      language: 'en_US',
      components: [
        { type: 'body', parameters: [{ type: 'text', text: '123456' }] },
        { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: '123456' }] },
      ],
    });
    expect(await cloudOtpTemplate(deps, 'd1', '0042', 'Arabic')).to.deep.include({ language: 'ar' });
    catalog = [otpEntry('en_US', 'PAUSED'), otpEntry('en')];
    expect(await cloudOtpTemplate(deps, 'd1', '0042', 'English')).to.deep.include({ language: 'en' });
  });

  it('When the WABA lacks the OTP template in that language, or it is paused, then the OTP is refused; a linked device sends its text', async () => {
    catalog = [otpEntry('en_US')];
    expect(await cloudOtpTemplate(deps, 'd1', '0042', 'Arabic')).to.deep.include({
      reason: 'template_not_found',
    });
    catalog = [otpEntry('en_US', 'PAUSED')];
    expect(await cloudOtpTemplate(deps, 'd1', '0042', 'English')).to.deep.include({
      reason: 'template_not_approved',
    });
    engine = 'linked';
    expect(await cloudOtpTemplate(deps, 'd1', '0042', 'English')).to.equal(undefined);
  });
});
