import { expect } from 'chai';
import { proto } from '@whiskeysockets/baileys';
import type { InboxMessage, SimUser } from '../../src/directory.js';
import {
  SIM_DELETE_WINDOW_MS,
  SIM_EDIT_WINDOW_MS,
  applyRevision,
  describeRevision,
  inboundRevision,
  rememberSent,
} from '../../src/revisions.js';

describe('messenger-sim: edits and deletes for everyone, with WhatsApp’s windows', () => {
  const at = Date.parse('2026-01-01T12:00:00Z');
  const phone = (inbox: InboxMessage[] = []) => ({ phone: '15550000001', inbox }) as unknown as SimUser;
  const original = (): InboxMessage => ({
    id: 'MSG1',
    from: '15550000009',
    type: 'text',
    text: 'hello',
    receivedAt: new Date(at).toISOString(),
  });
  const revision = (type: 'edit' | 'delete', text?: string): InboxMessage => ({
    id: `REV-${type}`,
    from: '15550000009',
    type,
    targetId: 'MSG1',
    ...(text !== undefined ? { text } : {}),
    receivedAt: new Date(at).toISOString(),
  });

  it('When an edit or a revoke protocol message arrives, then it is described with its target and text', () => {
    const key = { id: 'MSG1', fromMe: true, remoteJid: '15550000001@s.whatsapp.net' };
    const edit = describeRevision({
      protocolMessage: {
        key,
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        editedMessage: { extendedTextMessage: { text: 'new' } },
      },
    });
    expect(edit).to.deep.equal({ type: 'edit', targetId: 'MSG1', text: 'new' });
    const revoke = describeRevision({
      protocolMessage: { key, type: proto.Message.ProtocolMessage.Type.REVOKE },
    });
    expect(revoke).to.deep.equal({ type: 'delete', targetId: 'MSG1' });
    expect(describeRevision({ conversation: 'plain' })).to.equal(undefined);
  });

  it('When an edit comes within 15 minutes, then it applies; later, or of an unknown message, it is refused', () => {
    const target = original();
    const user = phone([target]);
    const inTime = revision('edit', 'edited');
    applyRevision(user, inTime, at + SIM_EDIT_WINDOW_MS - 1);
    expect(inTime.refused).to.equal(undefined);
    expect(target.editedText).to.equal('edited');
    const late = revision('edit', 'too late');
    applyRevision(user, late, at + SIM_EDIT_WINDOW_MS + 1);
    expect(late.refused).to.equal('window');
    expect(target.editedText).to.equal('edited');
    const stranger = { ...revision('edit', 'x'), from: '15550000008' };
    applyRevision(user, stranger, at);
    expect(stranger.refused).to.equal('unknown_target');
  });

  it('When a delete comes within 60 hours, then the message is deleted; later it stays', () => {
    const kept = original();
    const late = revision('delete');
    applyRevision(phone([kept]), late, at + SIM_DELETE_WINDOW_MS + 1);
    expect(late.refused).to.equal('window');
    expect(kept.deleted).to.equal(undefined);
    const gone = original();
    applyRevision(phone([gone]), revision('delete'), at + SIM_EDIT_WINDOW_MS + 1);
    expect(gone.deleted).to.equal(true);
  });

  it('When a contact revises its own messages, then only those it sent and within the window are built', () => {
    const contact = phone();
    rememberSent(contact, 'C1', at);
    const edit = inboundRevision(contact, '15550000002@s.whatsapp.net', 'C1', 'fixed', at + 1000);
    expect((edit as proto.IMessage).protocolMessage?.type).to.equal(
      proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
    );
    expect(inboundRevision(contact, 'x', 'C1', 'late', at + SIM_EDIT_WINDOW_MS + 1)).to.have.property(
      'refused',
    );
    expect(inboundRevision(contact, 'x', 'C1', undefined, at + SIM_EDIT_WINDOW_MS + 1)).not.to.have.property(
      'refused',
    );
    expect(inboundRevision(contact, 'x', 'NOT-SENT', 'x', at)).to.have.property('refused');
  });
});
