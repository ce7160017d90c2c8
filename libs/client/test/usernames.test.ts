import { expect } from 'chai';
import { useStack, waitFor } from '@mgw/testing';
import { createGatewayClient, type GatewayClient } from '@mgw/client';

/**
 * The typed client's `resolveUsername` against the running gateway (the services as processes, a
 * device linked through the simulator): a username guarded by a PIN, then found with it, then sent
 * to as `@name` with `sendText`; a username that breaks WhatsApp's rules is the API's 400, typed.
 */
describe('@mgw/client: resolveUsername against the running gateway', function () {
  this.timeout(120_000);
  const stack = useStack({ sim: { receiptDelayMs: 50, readDelayMs: 150 } });
  const account = '15550210001';
  const contact = '15550210002';
  let client: GatewayClient;

  before(async () => {
    await stack().linkByQr(account, 'Client Usernames');
    await stack().waitForStatus('connected');
    client = createGatewayClient({ baseUrl: stack().apiUrl, token: stack().token });
  });

  it('When a guarded username is resolved without and with its PIN, then the answers are typed, and sendText to @name reaches the contact', async () => {
    const { lid } = await stack().simApi<{ lid: string }>('POST', '/contacts', {
      phone: contact,
      username: 'typed.shop',
      usernamePin: '8642',
    });
    const guarded = await client.resolveUsername('@typed.shop');
    if (!guarded.ok) throw new Error(`resolve failed: ${JSON.stringify(guarded.error)}`);
    expect(guarded.data.data).to.deep.equal({ username: 'typed.shop', status: 'pin_required' });

    const found = await client.resolveUsername('typed.shop', '8642');
    if (!found.ok) throw new Error(`resolve failed: ${JSON.stringify(found.error)}`);
    expect(found.data.data.status).to.equal('found');
    expect(found.data.data.contact).to.deep.equal({
      phone: contact,
      lid: `${lid}@lid`,
      username: 'typed.shop',
    });

    const sent = await client.sendText('@typed.shop', 'typed hello');
    if (!sent.ok) throw new Error(`send failed: ${JSON.stringify(sent.error)}`);
    await waitFor(async () => (await stack().inbox(contact)).some((m) => m.text === 'typed hello'), {
      what: 'the text in the contact’s inbox',
    });
    const read = await client.getMessage(sent.data.messageId);
    if (!read.ok) throw new Error(read.error.error);
    expect(read.data.data).to.include({ to: `${lid}@lid` });

    const bad = await client.resolveUsername('shop..typed');
    expect(bad.ok).to.equal(false);
    if (bad.ok) return;
    expect(bad.status).to.equal(400);
    expect(bad.error.details?.[0]?.message).to.match(/\(rule: invalid_periods\)$/);
  });
});
