import { expect } from 'chai';
import { DELETE_WINDOW_MS, EDIT_WINDOW_MS, type SendBody } from '@mgw/contracts';
import type { MemoryAcceptor, MemoryMessages } from './memory-send.js';
import { namesRecipient, reviseMessage, type ReviseDeps } from './revise-message.js';
import { deviceId, lid, reviseFixture, type ReviseFixture } from './send-fixture.js';

/**
 * Edits, deletes and reactions name one of the device's messages: without an API, the records in
 * memory, the device's phone <-> LID map in an in-memory Redis (as the sender keeps it).
 */
describe('Revisions: reviseMessage, namesRecipient (an in-memory send pipeline)', () => {
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let deps: ReviseDeps;
  let message: ReviseFixture['message'];

  beforeEach(() => {
    ({ messages, acceptor, deps, message } = reviseFixture());
  });

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
});
