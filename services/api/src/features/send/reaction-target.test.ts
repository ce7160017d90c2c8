import { expect } from 'chai';
import type { InboundRecord } from '@mgw/store';
import type { MemoryMessages } from './memory-send.js';
import { reactionTarget } from './reaction-target.js';
import type { ReviseDeps } from './revise-message.js';
import { deviceId, lid, reviseFixture, type ReviseFixture } from './send-fixture.js';

/**
 * Edits, deletes and reactions name one of the device's messages: without an API, the records in
 * memory, the device's phone <-> LID map in an in-memory Redis (as the sender keeps it).
 */
describe('reactionTarget: the message a reaction is on, as WhatsApp knows it (an in-memory send pipeline)', () => {
  let messages: MemoryMessages;
  let deps: ReviseDeps;
  let message: ReviseFixture['message'];

  beforeEach(() => {
    ({ messages, deps, message } = reviseFixture());
  });

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
      await reactionTarget(reactDeps(), deviceId, { messageId: 'in-2' } as never, '120363000000000001@g.us'),
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
    expect(await reactionTarget(reactDeps(), 'rv-other', { messageId: failed } as never, '1')).to.deep.equal({
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
