import { expect } from 'chai';
import { addTransactionCapability, type SignalKeyStore } from '@whiskeysockets/baileys';
import { LIDMappingStore } from '@whiskeysockets/baileys/lib/Signal/lid-mapping.js';

/** A logger for Baileys' key stores that prints nothing. */
const quiet = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as never;

/**
 * The Baileys patch's LID-mapping replacement (patches/README.md; whatsmeow 563bcaa0): a pair
 * stored replaces the entries it contradicts, in the key store and in the socket's cache.
 */
describe("Baileys' LID mapping store: a new pair replaces the ones it contradicts (patches/)", () => {
  function mappingStore() {
    const data = new Map<string, unknown>();
    const store: SignalKeyStore = {
      get: async (type, ids) =>
        Object.fromEntries(
          ids.filter((id) => data.has(`${type}/${id}`)).map((id) => [id, data.get(`${type}/${id}`)]),
        ) as never,
      set: async (values) => {
        for (const [type, byId] of Object.entries(values)) {
          for (const [id, value] of Object.entries(byId ?? {})) {
            if (value === null || value === undefined) data.delete(`${type}/${id}`);
            else data.set(`${type}/${id}`, value);
          }
        }
      },
    };
    const keys = addTransactionCapability(store, quiet, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    // No usync here: a phone the store does not know stays unknown.
    const mapping = new LIDMappingStore(keys, quiet, async () => undefined);
    const stored = () => Object.fromEntries([...data].map(([k, v]) => [k.replace(/^lid-mapping\//, ''), v]));
    return { mapping, stored };
  }
  const pn = (user: string) => `${user}@s.whatsapp.net`;

  it('When a LID comes with a new phone (a changed number), then the old phone no longer maps to it, in the store and the cache', async () => {
    const { mapping, stored } = mappingStore();
    await mapping.storeLIDPNMappings([{ lid: '111@lid', pn: pn('15551230001') }]);
    expect(await mapping.getLIDForPN(pn('15551230001'))).to.equal('111@lid'); // cached now
    await mapping.storeLIDPNMappings([{ lid: '111@lid', pn: pn('15551230009') }]);
    expect(stored()).to.deep.equal({ '15551230009': '111', '111_reverse': '15551230009' });
    expect(await mapping.getLIDForPN(pn('15551230001'))).to.equal(null);
    expect(await mapping.getPNForLID('111@lid')).to.equal('15551230009:0@s.whatsapp.net');
  });

  it('When a phone comes with a new LID (the number registered again), then the old LID no longer maps to it', async () => {
    const { mapping, stored } = mappingStore();
    await mapping.storeLIDPNMappings([{ lid: '222@lid', pn: pn('15551230002') }]);
    expect(await mapping.getPNForLID('222@lid')).to.equal('15551230002:0@s.whatsapp.net');
    await mapping.storeLIDPNMappings([{ lid: '333@lid', pn: pn('15551230002') }]);
    expect(stored()).to.deep.equal({ '15551230002': '333', '333_reverse': '15551230002' });
    expect(await mapping.getPNForLID('222@lid')).to.equal(null);
    expect(await mapping.getLIDForPN(pn('15551230002'))).to.equal('333@lid');
  });

  it('When the old entry already names someone else, or two pairs swap in one batch, then nothing of theirs is deleted', async () => {
    const { mapping, stored } = mappingStore();
    await mapping.storeLIDPNMappings([
      { lid: '444@lid', pn: pn('15551230004') },
      { lid: '555@lid', pn: pn('15551230005') },
    ]);
    // Two contacts swap numbers in one batch: both new pairs stand.
    await mapping.storeLIDPNMappings([
      { lid: '444@lid', pn: pn('15551230005') },
      { lid: '555@lid', pn: pn('15551230004') },
    ]);
    expect(stored()).to.deep.equal({
      '15551230004': '555',
      '15551230005': '444',
      '444_reverse': '15551230005',
      '555_reverse': '15551230004',
    });
  });
});
