import { expect } from 'chai';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { postStatsOf } from '../../src/channels.js';
import { chatStatesOf } from '../../src/label-events.js';

const node = (tag: string, attrs: Record<string, string> = {}, content?: BinaryNode[]): BinaryNode => ({
  tag,
  attrs,
  ...(content ? { content } : {}),
});

describe("channel posts' counts (postStatsOf) and chat state changes (chatStatesOf)", () => {
  it('When WhatsApp answers message_updates, then each post has its views and reactions by emoji, newest first; a post without server_id and zero counts are left out', () => {
    const answer = node('iq', { type: 'result' }, [
      node('message_updates', {}, [
        node('messages', {}, [
          node('message', { id: '3EB0AAA', server_id: '101', t: '1795600000' }, [
            node('views_count', { count: '3' }),
            node('reactions', {}, [
              node('reaction', { code: '👍', count: '2' }),
              node('reaction', { code: '❤️', count: '1' }),
              node('reaction', { code: '😮', count: '0' }),
            ]),
          ]),
          node('message', { server_id: '102' }),
          node('message', { id: 'no-server-id' }, [node('views_count', { count: '9' })]),
        ]),
      ]),
    ]);
    expect(postStatsOf(answer)).to.deep.equal([
      { serverId: '102', views: 0, reactions: {} },
      {
        platformMessageId: '3EB0AAA',
        serverId: '101',
        views: 3,
        reactions: { '👍': 2, '❤️': 1 },
        postedAt: new Date(1_795_600_000_000).toISOString(),
      },
    ]);
    expect(postStatsOf(node('iq', { type: 'result' }))).to.deep.equal([]);
  });

  it('When Baileys reports chat updates, then archive, pin and mute changes are notices by chat (a phone, a LID or a group), and other updates none', () => {
    expect(
      chatStatesOf([
        { id: '15550001111@s.whatsapp.net', archived: true },
        { id: '98765@lid', pinned: 1_795_600_000, muteEndTime: 1_795_603_600_000 },
        { id: '120363000000000001@g.us', pinned: null, muteEndTime: null, archived: false },
        { id: '15550002222@s.whatsapp.net', unreadCount: 3, conversationTimestamp: 5 },
        { archived: true },
      ]),
    ).to.deep.equal([
      { kind: 'chat-state', chat: '15550001111', archived: true },
      { kind: 'chat-state', chat: '98765@lid', pinned: true, mutedUntil: new Date(1_795_603_600_000) },
      {
        kind: 'chat-state',
        chat: '120363000000000001@g.us',
        archived: false,
        pinned: false,
        mutedUntil: null,
      },
    ]);
  });
});
