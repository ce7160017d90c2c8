import { expect } from 'chai';
import { FirstContacts, TCTOKEN_RELAY_MARGIN_MS, type SaltKeyStore, type WASocket } from '../../src/index.js';
import { createLogger } from '@mgw/common';

/** A key store in memory, as the device's sealed store answers (a null value deletes). */
function memoryKeys(): SaltKeyStore & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  return {
    data,
    async get(type, ids) {
      return Object.fromEntries(
        ids.flatMap((id) => (data.has(`${type}/${id}`) ? [[id, data.get(`${type}/${id}`)]] : [])),
      );
    },
    async set(sets) {
      for (const [type, values] of Object.entries(sets))
        for (const [id, value] of Object.entries(values))
          if (value === null) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
    },
    async warm() {},
  };
}

const B = 7 * 86_400;

/**
 * The tctoken is read once: the token the gateway counts on must still be valid when Baileys' relay
 * reads it again (later, by its own clock). One that may expire meanwhile is dropped as Baileys
 * drops an expired one, and the message carries the cstoken instead — never neither token.
 */
describe('messenger: a tctoken about to expire is not counted on (FirstContacts.address)', () => {
  const realNow = Date.now;
  // A moment one minute before a weekly bucket boundary (Baileys' expiry rule moves at those).
  const k = Math.floor(realNow() / 1000 / B) + 1;
  const now = k * B * 1000 - 60_000;
  const lid = '5550001@lid';
  const sock = { serverProps: { privacyTokenOn1to1: true } } as unknown as WASocket;
  const logger = createLogger({ level: 'silent', service: 'test' });

  beforeEach(() => {
    Date.now = () => now;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  async function addressWith(tokenTimestamp: number, salt: boolean) {
    const keys = memoryKeys();
    if (salt) await keys.set({ 'nct-salt': { salt: Buffer.alloc(32, 1) } });
    await keys.set({
      tctoken: { [lid]: { token: Buffer.from('tc'), timestamp: tokenTimestamp, senderTimestamp: 7 } },
    });
    const sent = await new FirstContacts(() => keys, { logger }).address(sock, lid);
    return { sent, kept: keys.data.get(`tctoken/${lid}`) as { token: Buffer } };
  }

  it(`When the tctoken expires within ${TCTOKEN_RELAY_MARGIN_MS / 60_000} minutes and the device holds a salt, then the message carries the cstoken and the tctoken is dropped before the relay reads it`, async () => {
    const { sent, kept } = await addressWith((k - 4) * B + 1, true);
    expect(sent.token).to.equal('cstoken');
    expect(sent.nodes.map((n) => n.tag)).to.deep.equal(['cstoken']);
    expect(kept).to.deep.equal({ token: Buffer.alloc(0), senderTimestamp: 7 });
  });

  it('When the tctoken lasts, or is about to expire but there is no salt to make a cstoken, then the tctoken is counted on and kept', async () => {
    const lasting = await addressWith((k - 1) * B, true);
    expect(lasting.sent.token).to.equal('tctoken');
    expect(lasting.kept.token).to.deep.equal(Buffer.from('tc'));
    const noSalt = await addressWith((k - 4) * B + 1, false);
    expect(noSalt.sent.token).to.equal('tctoken');
    expect(noSalt.kept.token).to.deep.equal(Buffer.from('tc'));
  });
});

/**
 * A device that holds the salt but whose lookup of a contact's LID did not answer asks once more
 * before the message would go without any token (a cstoken is made of the LID).
 */
describe('messenger: a contact’s LID resolved before a first contact goes (FirstContacts.address)', () => {
  const logger = createLogger({ level: 'silent', service: 'test' });
  const phoneJid = '15550001111@s.whatsapp.net';

  function sockAnswering(answers: (string | null)[]) {
    const asked: string[] = [];
    const sock = {
      serverProps: { privacyTokenOn1to1: true },
      signalRepository: {
        lidMapping: {
          getLIDForPN: async (pn: string) => (asked.push(pn), answers.shift() ?? null),
        },
      },
    } as unknown as WASocket;
    return { sock, asked };
  }

  it('When the first lookup of the LID does not answer and the second does, then the message goes to the LID with a valid cstoken', async () => {
    const keys = memoryKeys();
    await keys.set({ 'nct-salt': { salt: Buffer.alloc(32, 2) } });
    const { sock, asked } = sockAnswering([null, '777000@lid']);
    const sent = await new FirstContacts(() => keys, { logger }).address(sock, phoneJid);
    expect(asked).to.have.length(2);
    expect(sent).to.deep.include({
      to: '777000@lid',
      token: 'cstoken',
      attrs: { peer_recipient_pn: phoneJid },
    });
  });

  it('When the LID stays unknown, then the message goes by phone as before (its 463, if any, fails only it)', async () => {
    const keys = memoryKeys();
    await keys.set({ 'nct-salt': { salt: Buffer.alloc(32, 2) } });
    const { sock } = sockAnswering([null, null]);
    const sent = await new FirstContacts(() => keys, { logger }).address(sock, phoneJid);
    expect(sent).to.deep.include({ to: phoneJid, token: 'none', salt: true });
  });
});
