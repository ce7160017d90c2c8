import { expect } from 'chai';
import { ACCOUNT_ERRORS, keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';
import { openApiProblem } from '../../../../test/helpers/openapi-check.js';

type Json = Record<string, unknown>;

/**
 * The account's 2026 protocol changes Baileys rc14 lacks (docs/whatsapp-2026.md), through the real
 * client against the simulator taught them:
 * - the "about" is a text status set by a GraphQL mutation (whatsmeow 662b0121): the legacy iq
 *   Baileys sends is answered but changes nothing (libs/messenger text-status.ts);
 * - the blocklist goes by LID, with the phone beside it only when the client knows it (whatsmeow
 *   8d023aa9): Baileys refuses a LID whose number it does not know, so a contact that hides its
 *   number could not be blocked (libs/messenger account.ts blocks it by its LID alone).
 */
describe('e2e: the account in 2026 — the about as a text status, blocking a hidden number by its LID (real client, simulator)', function () {
  this.timeout(150_000);
  const stack = useStack({ allInOne: true, env: { RATE_LIMIT_ACCOUNT: '1000' } });
  const account = '15550690001';
  const hidden = '15550690002';

  const api = async <T = Json>(method: string, path: string, body?: unknown) => {
    const res = await stack().api<T>(method, path, body);
    const problem = openApiProblem(
      `${stack().apiUrl}/api/messenger/v1${path}`,
      method,
      res.status,
      res.body,
      res.headers,
    );
    expect(problem, `${method} ${path}: ${problem}`).to.equal(undefined);
    return res;
  };
  const simBlocked = async () =>
    (await stack().simApi<{ blocked: { lid: string }[] }>('GET', `/accounts/${account}/profile`)).blocked.map(
      (b) => b.lid,
    );
  const writes = (text: string) =>
    fetch(`${stack().simulator.controlUrl}/contacts/${hidden}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: account, text }),
    });

  before(async () => {
    await stack().linkByQr(account);
  });

  it('When the about is set, then WhatsApp keeps it (the text status mutation) and GET /profile reads it back from WhatsApp; set empty, it is cleared', async () => {
    const profile = () => stack().simApi<{ about: string | null }>('GET', `/accounts/${account}/profile`);
    const set = await api<{ data: { profile: Json } }>('PATCH', '/profile', {
      about: 'Open 9 to 5, Mon-Fri',
    });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.data.profile).to.deep.include({ about: 'Open 9 to 5, Mon-Fri' });
    expect((await profile()).about).to.equal('Open 9 to 5, Mon-Fri');
    const cleared = await api<{ data: { profile: Json } }>('PATCH', '/profile', { about: '' });
    expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
    expect(cleared.body.data.profile).to.not.have.property('about');
    expect((await profile()).about).to.equal(null);
  });

  it('When a contact known only by its LID is blocked, then WhatsApp takes the block (no phone beside it), GET /blocklist lists the LID, sends to it are refused and it can write no more; unblocked, it writes again', async () => {
    const contact = await stack().simApi<{ lid: string }>('POST', '/contacts', {
      phone: hidden,
      hidePhone: true,
    });
    const lid = `${contact.lid}@lid`;
    expect((await writes('hello from nowhere')).status).to.equal(200);
    await waitFor(
      async () =>
        (await stack().redis.hget(keys.contactIdentities(stack().deviceId), `l:${contact.lid}`)) === '',
      { what: 'the LID met, with no number' },
    );

    const blocked = await api<{ data: { blocked: boolean; contact: Json } }>('POST', '/blocklist', {
      phone: lid,
    });
    expect(blocked.status, JSON.stringify(blocked.body)).to.equal(200);
    expect(blocked.body.data).to.deep.equal({ blocked: true, contact: { lid } });
    expect(await simBlocked()).to.deep.equal([lid]);
    const list = await api<{ data: { total: number; contacts: Json[] } }>('GET', '/blocklist');
    expect(list.body.data).to.deep.equal({ total: 1, contacts: [{ lid }] });
    const refused = await api<{ error: string }>('POST', '/send', { to: lid, text: 'hello?' });
    expect(refused.status).to.equal(422);
    expect(refused.body.error).to.equal(ACCOUNT_ERRORS.recipientBlocked);
    expect((await writes('let me in')).status, 'WhatsApp drops what a blocked contact writes').to.equal(409);

    const unblocked = await api<{ data: { blocked: boolean } }>('DELETE', `/blocklist/${lid}`);
    expect(unblocked.status, JSON.stringify(unblocked.body)).to.equal(200);
    expect(await simBlocked()).to.deep.equal([]);
    expect((await writes('thanks')).status).to.equal(200);
  });
});
