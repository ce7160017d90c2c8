import { expect } from 'chai';
import { createLogger } from '@mgw/common';
import { FirstContacts, NCT_SALT_TYPE, type SaltKeyStore } from '../../src/index.js';

/** A key store that records each warm-up (type and ids), answering `answer` (or failing). */
function recordingStore(answer: 'nothing' | 'fail' = 'nothing') {
  const reads: [string, string[]][] = [];
  const keys: SaltKeyStore = {
    get: () => Promise.reject(new Error('a prefetch warms the cache; it looks nothing up')),
    set: async () => undefined,
    warm: async (type, ids) => {
      reads.push([type, ids]);
      if (answer === 'fail') throw new Error('Redis away');
    },
  };
  return { keys, reads };
}

const logger = createLogger({ level: 'silent', service: 'test' });

/**
 * Issue 71 (goal 6): the keys a one-to-one send reads one after another after its claim — the LID
 * map, the NCT salt, the contact's tctoken and its main device's session — are read beforehand,
 * all in one tick (one round trip on the auto-pipelined connection), under the ids `address` and
 * Baileys' relay read them by.
 */
describe('FirstContacts.prefetch: the keys of a send read in one tick', () => {
  it('When the number and its LID are known, then its map entries both ways, the salt, the tctoken and the session are asked at once', () => {
    const { keys, reads } = recordingStore();
    new FirstContacts(() => keys, { logger }).prefetch('15551234567@s.whatsapp.net', '987654321@lid');
    // Asked synchronously (nothing waits for an answer before the next is made), and warmed, not
    // looked up: the key cache's hit and miss counts stay the lookups' (auth-state.test.ts).
    expect(reads).to.deep.equal([
      ['lid-mapping', ['15551234567', '987654321_reverse']],
      [NCT_SALT_TYPE, ['salt']],
      ['tctoken', ['987654321@lid']],
      ['session', ['987654321_1.0']],
    ]);
  });

  it('When only the number is known, then its map entry and the salt; a LID alone, its reverse entry and its keys', () => {
    const pn = recordingStore();
    new FirstContacts(() => pn.keys, { logger }).prefetch('15551234567@s.whatsapp.net');
    expect(pn.reads).to.deep.equal([
      ['lid-mapping', ['15551234567']],
      [NCT_SALT_TYPE, ['salt']],
    ]);
    const lid = recordingStore();
    new FirstContacts(() => lid.keys, { logger }).prefetch('987654321@lid');
    expect(lid.reads).to.deep.equal([
      ['lid-mapping', ['987654321_reverse']],
      [NCT_SALT_TYPE, ['salt']],
      ['tctoken', ['987654321@lid']],
      ['session', ['987654321_1.0']],
    ]);
  });

  it('When the chat is no person (a group, a status) or the socket has no key store, then nothing is read; a failed read rejects nothing', async () => {
    const { keys, reads } = recordingStore();
    const contacts = new FirstContacts(() => keys, { logger });
    contacts.prefetch('120363000000000000@g.us');
    contacts.prefetch('status@broadcast');
    expect(reads).to.deep.equal([]);
    new FirstContacts(() => undefined, { logger }).prefetch('15551234567@s.whatsapp.net');
    const failing = recordingStore('fail');
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      new FirstContacts(() => failing.keys, { logger }).prefetch(
        '15551234567@s.whatsapp.net',
        '987654321@lid',
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(failing.reads).to.have.length(4);
    expect(unhandled).to.deep.equal([]);
  });
});
