import { expect } from 'chai';
import type { BinaryNode, WAMessageKey } from '@whiskeysockets/baileys';
import {
  LookupFailedError,
  StanzaUsernames,
  contactOf,
  contactUsernames,
  parseUsernameAnswer,
  usernameLookupIq,
} from '../../src/index.js';

const answer = (user?: BinaryNode): BinaryNode => ({
  tag: 'iq',
  attrs: { type: 'result' },
  content: [{ tag: 'usync', attrs: {}, content: [{ tag: 'list', attrs: {}, content: user ? [user] : [] }] }],
});
const user = (attrs: Record<string, string>, contact: BinaryNode): BinaryNode => ({
  tag: 'user',
  attrs,
  content: [contact],
});

describe('messenger: username lookups and the usernames WhatsApp sends (usernames.ts)', () => {
  it('When a lookup is built, then it is WhatsApp Web’s: LID addressing, a user without a jid naming the username and, when given, its PIN', () => {
    const iq = usernameLookupIq('alice.shop', '0420', 'sid-1');
    expect(iq.attrs).to.deep.equal({ to: '@s.whatsapp.net', type: 'get', xmlns: 'usync' });
    const usync = (iq.content as BinaryNode[])[0]!;
    expect(usync.attrs).to.include({ context: 'interactive', mode: 'query', sid: 'sid-1' });
    const [query, list] = usync.content as BinaryNode[];
    expect((query!.content as BinaryNode[]).map((n) => [n.tag, n.attrs])).to.deep.equal([
      ['contact', { addressing_mode: 'lid' }],
      ['business', {}],
    ]);
    expect(list!.content).to.deep.equal([
      {
        tag: 'user',
        attrs: {},
        content: [{ tag: 'contact', attrs: { username: 'alice.shop', pin: '0420' } }],
      },
    ]);
    const withoutPin = usernameLookupIq('alice.shop', undefined, 'sid-2');
    expect(JSON.stringify(withoutPin)).to.not.include('pin');
  });

  it('When WhatsApp answers, then a jid is found (LID, and phone from pn_jid), no jid is pin_required, "out" or a 404 error is not_found, any other error fails', () => {
    const contactIn = { tag: 'contact', attrs: { type: 'in', username: 'alice.shop' } };
    expect(
      parseUsernameAnswer(
        'alice.shop',
        answer(user({ jid: '111222333@lid', pn_jid: '15551234567@s.whatsapp.net' }, contactIn)),
      ),
    ).to.deep.equal({ username: 'alice.shop', status: 'found', lid: '111222333@lid', phone: '15551234567' });
    expect(
      parseUsernameAnswer('alice.shop', answer(user({ jid: '111222333@lid' }, contactIn))),
    ).to.deep.equal({
      username: 'alice.shop',
      status: 'found',
      lid: '111222333@lid',
    });
    expect(parseUsernameAnswer('alice.shop', answer(user({}, contactIn)))).to.deep.equal({
      username: 'alice.shop',
      status: 'pin_required',
    });
    expect(
      parseUsernameAnswer('alice.shop', answer(user({}, { tag: 'contact', attrs: { type: 'out' } }))),
    ).to.deep.equal({ username: 'alice.shop', status: 'not_found' });
    const error = (code?: string): BinaryNode => ({
      tag: 'contact',
      attrs: {},
      content: [{ tag: 'error', attrs: code ? { code, text: 'x' } : {} }],
    });
    expect(parseUsernameAnswer('a', answer(user({}, error('404')))).status).to.equal('not_found');
    expect(parseUsernameAnswer('a', answer(user({}, error())))).to.include({ status: 'not_found' });
    expect(parseUsernameAnswer('a', answer())).to.include({ status: 'not_found' });
    expect(() => parseUsernameAnswer('a', answer(user({}, error('429'))))).to.throw(LookupFailedError);
    expect(() => parseUsernameAnswer('a', { tag: 'iq', attrs: {} })).to.throw(LookupFailedError);
  });

  it('When a one-to-one message frame names its writer’s username, then its key gets it as remoteJidUsername (valid ones only; not groups, not ours) and contactOf reads it', () => {
    const stanzas = new StanzaUsernames();
    stanzas.seen({ tag: 'message', attrs: { id: 'A', from: '111@lid', username: '@Alice.Shop' } });
    stanzas.seen({ tag: 'message', attrs: { id: 'B', from: '111@lid', username: 'no way!' } });
    stanzas.seen({
      tag: 'message',
      attrs: { id: 'C', from: '120363@g.us', participant: '111@lid', username: 'grp' },
    });
    const key = (id: string, over: Partial<WAMessageKey> = {}): WAMessageKey => ({
      id,
      remoteJid: '111@lid',
      fromMe: false,
      ...over,
    });
    const a = key('A');
    stanzas.fillUsername(a);
    expect(a.remoteJidUsername).to.equal('alice.shop');
    expect(contactOf(a)).to.deep.equal({ lid: '111@lid', username: 'alice.shop' });
    for (const other of [
      key('B'),
      key('C', { remoteJid: '120363@g.us' }),
      key('A', { fromMe: true }),
      key('Z'),
    ]) {
      stanzas.fillUsername(other);
      expect(other.remoteJidUsername, other.id!).to.equal(undefined);
    }
    // A group message's author: Baileys' participantUsername.
    expect(
      contactOf({ id: 'G', remoteJid: '120363@g.us', participant: '111@lid', participantUsername: 'x' }),
    ).to.deep.equal({});
  });

  it('When Baileys reports contacts with usernames (app-state, history), then those with a LID become identities with the username', () => {
    expect(
      contactUsernames([
        { id: '15551234567@s.whatsapp.net', lid: '111@lid', username: 'Alice.Shop' },
        { id: '222@lid', username: 'bob_99' },
        { id: '15551234568@s.whatsapp.net', username: 'no_lid' },
        { id: '333@lid', username: 'ab' },
        { id: '444@lid' },
      ]),
    ).to.deep.equal([
      { phone: '15551234567', lid: '111@lid', username: 'alice.shop' },
      { lid: '222@lid', username: 'bob_99' },
    ]);
  });
});
