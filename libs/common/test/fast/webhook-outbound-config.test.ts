import { expect } from 'chai';
import { validateEnv, webhookOutboundConfig, webhookOutboundEnv } from '../../src/index.js';

const configOf = (env: NodeJS.ProcessEnv) => webhookOutboundConfig(validateEnv([webhookOutboundEnv], env));

describe('The outbound guard of webhooks, in and out of sandbox mode', () => {
  it('When MESSENGER_SANDBOX_URL is set, then webhooks may reach loopback (127.0.0.0/8, ::1, localhost), and no other private address', () => {
    const config = configOf({ MESSENGER_SANDBOX_URL: 'http://127.0.0.1:3100' });
    expect(config.sandboxLoopback).to.equal(true);
    for (const address of ['127.0.0.1', '127.0.0.53', '::1', '::ffff:127.0.0.1'])
      expect(config.allowList.allowsAddress(address), address).to.equal(true);
    expect(config.allowList.allowsHost('localhost')).to.equal(true);
    for (const address of ['10.0.0.1', '192.168.1.1', '169.254.169.254', 'fd00::1'])
      expect(config.allowList.allowsAddress(address), address).to.equal(false);
  });

  it('When MESSENGER_SANDBOX_URL is not set (production), then loopback is refused unless ALLOWED_PRIVATE_HOSTS lists it', () => {
    const production = configOf({});
    expect(production.sandboxLoopback).to.equal(false);
    expect(production.allowList.allowsAddress('127.0.0.1')).to.equal(false);
    expect(production.allowList.allowsHost('localhost')).to.equal(false);
    const listed = configOf({ ALLOWED_PRIVATE_HOSTS: '10.1.2.0/24' });
    expect(listed.allowList.allowsAddress('10.1.2.3')).to.equal(true);
    expect(listed.allowList.allowsAddress('127.0.0.1')).to.equal(false);
    // in sandbox mode the operator's entries stay, loopback is added
    const both = configOf({
      ALLOWED_PRIVATE_HOSTS: '10.1.2.0/24',
      MESSENGER_SANDBOX_URL: 'http://sandbox:3100',
    });
    expect(both.allowList.allowsAddress('10.1.2.3')).to.equal(true);
    expect(both.allowList.allowsAddress('127.0.0.1')).to.equal(true);
  });
});
