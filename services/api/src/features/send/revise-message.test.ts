import { expect } from 'chai';
import { DELETE_WINDOW_MS, EDIT_WINDOW_MS, keys, type SendBody } from '@mgw/contracts';
import type { InboundRecord } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import { MemoryAcceptor, MemoryMessages } from './memory-send.js';
import { reactionTarget } from './reaction-target.js';
import { namesRecipient, reviseMessage, type ReviseDeps } from './revise-message.js';

/**
 * Edits, deletes and reactions name one of the device's messages: without an API, the records in
 * memory, the device's phone <-> LID map in an in-memory Redis (as the sender keeps it).
 */
describe('Revisions and reactions: reviseMessage, namesRecipient, reactionTarget (an in-memory send pipeline)', () => {
  const deviceId = 'rv-1';
  const lid = '998877665544@lid';
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let redis: MemoryRedis;
  let deps: ReviseDeps;

  beforeEach(() => {
    messages = new MemoryMessages();
    acceptor = new MemoryAcceptor(messages);
    redis = new MemoryRedis();
    redis.hash(keys.contactIdentities(deviceId), {
      'p:15550001111': '998877665544',
      'l:998877665544': '15550001111',
    });
    deps = { acceptor, messages, redis: redis.client };
  });

  /** A message of the device to `to`, sent `agoMs` ago (or still queued). */
  async function message(to: string, agoMs?: number): Promise<string> {
    const accepted = (await acceptor.accept({
      deviceId,
      kind: 'send',
      recipients: [to],
      content: { text: 'first' },
      priority: 0,
    })) as {
      jobs: { messageId: string }[];
    };
    const id = accepted.jobs[0]!.messageId;
    if (agoMs !== undefined) messages.sent(deviceId, id, new Date(Date.now() - agoMs));
    acceptor.requests.length = 0;
    return id;
  }
  const revise = (body: Partial<SendBody>) => reviseMessage(deps, deviceId, body as SendBody);

  it('When a sent text is edited within the window, then an edit of its own is queued to its chat, named by either identity of the contact', async () => {
    const id = await message('15550001111', 60_000);
    const byPhone = await revise({ to: '15550001111', edit: { messageId: id, text: 'second' } });
    const byLid = await revise({ to: lid, edit: { messageId: id, text: 'third' } });
    expect(byPhone).to.deep.include({ kind: 'accepted' });
    expect(byLid).to.deep.include({ kind: 'accepted' });
    expect(acceptor.requests.map((r) => [r.recipients, r.content])).to.deep.equal([
      [['15550001111'], { edit: { messageId: id, text: 'second' } }],
      [['15550001111'], { edit: { messageId: id, text: 'third' } }],
    ]);
  });

  it('When the edit is past the window, not of a sent text, or names another recipient, then refused and nothing queued', async () => {
    const old = await message('15550001111', EDIT_WINDOW_MS + 1000);
    const queued = await message('15550001111');
    expect(await revise({ to: '15550001111', edit: { messageId: old, text: 'x' } })).to.deep.equal({
      kind: 'refused',
      reason: 'edit_window_passed',
    });
    expect(await revise({ to: '15550001111', edit: { messageId: queued, text: 'x' } })).to.deep.equal({
      kind: 'refused',
      reason: 'not_editable',
    });
    expect(await revise({ to: '15550009999', edit: { messageId: old, text: 'x' } })).to.deep.include({
      reason: 'invalid',
    });
    expect(
      await revise({ to: ['15550001111'] as never, edit: { messageId: old, text: 'x' } }),
    ).to.deep.include({
      reason: 'invalid',
    });
    expect(await revise({ to: '15550001111', edit: { messageId: 'nope', text: 'x' } })).to.deep.equal({
      kind: 'refused',
      reason: 'revision_target_not_found',
    });
    expect(acceptor.requests).to.deep.equal([]);
  });

  it('When a queued message is deleted, then it leaves the queue at once; a sent one within the window gets a revoke; past it, or failed, refused', async () => {
    const queued = await message('15550001111');
    expect(await revise({ to: '15550001111', delete: { messageId: queued } })).to.deep.equal({
      kind: 'deleted',
      messageId: queued,
    });
    expect((await messages.get(deviceId, queued))?.status).to.equal('deleted');
    expect(await revise({ to: '15550001111', delete: { messageId: queued } })).to.deep.equal({
      kind: 'refused',
      reason: 'not_deletable',
    });

    const sent = await message('15550001111', 60_000);
    expect(await revise({ to: '15550001111', delete: { messageId: sent } })).to.deep.include({
      kind: 'accepted',
    });
    expect(acceptor.requests.at(-1)!.content).to.deep.equal({ delete: { messageId: sent } });

    const old = await message('15550001111', DELETE_WINDOW_MS + 1000);
    expect(await revise({ to: '15550001111', delete: { messageId: old } })).to.deep.equal({
      kind: 'refused',
      reason: 'delete_window_passed',
    });
    const failed = await message('15550001111');
    messages.failed(deviceId, failed, 'not_on_whatsapp');
    expect(await revise({ to: '15550001111', delete: { messageId: failed } })).to.deep.equal({
      kind: 'refused',
      reason: 'not_deletable',
    });
  });

  it('When the recipient is named, then its `to` as sent or the other identity the map knows count, nothing else', async () => {
    const target = { deviceId, to: '15550001111' } as Parameters<typeof namesRecipient>[1];
    expect(await namesRecipient(deps, target, '15550001111')).to.equal(true);
    expect(await namesRecipient(deps, target, lid)).to.equal(true);
    expect(await namesRecipient(deps, target, '15550002222')).to.equal(false);
  });

  describe('reactionTarget', () => {
    const inbound = new Map<string, InboundRecord>();
    const reactDeps = () => ({
      ...deps,
      inbound: { get: async (_d: string, id: string) => inbound.get(id) },
    });

    it('When the reaction is on a message the account sent, then its WhatsApp id from us, in the chat of its recipient (either identity)', async () => {
      const id = await message('15550001111', 1000);
      const record = (await messages.get(deviceId, id))!;
      const target = { platformMessageId: record.platformMessageId, fromMe: true };
      expect(
        await reactionTarget(reactDeps(), deviceId, { messageId: id, emoji: '👍' } as never, '15550001111'),
      ).to.deep.equal(target);
      expect(
        await reactionTarget(reactDeps(), deviceId, { messageId: id, emoji: '👍' } as never, lid),
      ).to.deep.equal(target);
      expect(
        await reactionTarget(reactDeps(), deviceId, { messageId: id } as never, '15550002222'),
      ).to.deep.include({ reason: 'invalid' });
    });

    it("When the reaction is on a contact's message, then not from us; in a group it names the member who wrote it", async () => {
      const put = (id: string, more: Partial<InboundRecord>) => {
        messages.put({ messageId: id, deviceId, direction: 'inbound', status: 'received' } as never);
        inbound.set(id, {
          messageId: id,
          deviceId,
          platformMessageId: `WA-${id}`,
          from: '15550001111',
          contact: { phone: '15550001111' },
          ...more,
        } as InboundRecord);
      };
      put('in-1', {});
      put('in-2', {
        chat: { id: '120363000000000001@g.us' } as never,
        contact: { phone: '15550003333', lid },
      });
      expect(await reactionTarget(reactDeps(), deviceId, { messageId: 'in-1' } as never, lid)).to.deep.equal({
        platformMessageId: 'WA-in-1',
        fromMe: false,
      });
      expect(
        await reactionTarget(
          reactDeps(),
          deviceId,
          { messageId: 'in-2' } as never,
          '120363000000000001@g.us',
        ),
      ).to.deep.equal({
        platformMessageId: 'WA-in-2',
        fromMe: false,
        participant: lid,
      });
    });

    it("When the message is unknown, another device's or failed, then refused before any chat is looked at", async () => {
      const failed = await message('15550001111');
      messages.failed(deviceId, failed, 'x');
      expect(await reactionTarget(reactDeps(), deviceId, { messageId: 'nope' } as never, '1')).to.deep.equal({
        kind: 'refused',
        reason: 'reaction_target_not_found',
      });
      expect(
        await reactionTarget(reactDeps(), 'rv-other', { messageId: failed } as never, '1'),
      ).to.deep.equal({
        kind: 'refused',
        reason: 'reaction_target_not_found',
      });
      expect(
        await reactionTarget(reactDeps(), deviceId, { messageId: failed } as never, '15550001111'),
      ).to.deep.equal({
        kind: 'refused',
        reason: 'reaction_target_failed',
      });
    });
  });
});
