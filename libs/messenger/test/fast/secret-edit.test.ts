import { hkdfSync } from 'node:crypto';
import { expect } from 'chai';
import { decryptPollVote, proto, type WAMessage } from '@whiskeysockets/baileys';
import { messageEditKey } from '@mgw/messenger-sim';
import {
  messageSecretKey,
  openMessageSecret,
  openSecretEdit,
  parseSecretEdit,
  sealMessageSecret,
  SECRET_ENC_POLL_ADD_OPTION,
  useCaseOf,
} from '../../src/secret-edit.js';
import { messageSecretOf } from '../../src/inbound-message.js';

const SECRET = Buffer.alloc(32, 0x33);
const PN = '5511999999999@s.whatsapp.net';
const LID = '111222333444555@lid';
const IV = Buffer.from('000102030405060708090a0b', 'hex');

/**
 * The vector, derived step by step from whatsmeow's code path (msgsecret.go at fcbcaad5:
 * `DecryptSecretEncryptedMessage` → MESSAGE_EDIT → `EncSecretMessageEdit` = "Message Edit" →
 * `generateMsgSecretKey`: `hkdfutil.SHA256(secret, nil, id‖origSender‖modSender‖"Message Edit", 32)`,
 * no additional data for this use case → `gcmutil.Decrypt`, AES-256-GCM, tag appended), with
 * whatsapp-rust's test inputs (a secret of 0x33 bytes, id "ORIGID", the editor its own original
 * sender) and a fixed IV. The key was computed with node's own HKDF (`hkdfSync`, a different
 * implementation from ours), the ciphertext of "edited!" with node's AES-GCM.
 */
const VECTOR = {
  key: '2e98169ffd87cb42080269f619d33e1d5c24b14514728d6c7ef17213c4476455',
  ciphertextOfEdited: '7a72148b31b45bca61be544db62758a9451b6058e2783d',
};

/** A contact's envelope as WhatsApp Web builds it (whatsapp-rust build_secret_message_edit). */
function envelope(opts: {
  key: WAMessage['key'];
  orig: string;
  modifier: string;
  type?: number;
  inner?: proto.IMessage;
  id?: string;
}): WAMessage {
  const id = opts.id ?? 'ORIGID';
  const inner: proto.IMessage = opts.inner ?? {
    protocolMessage: {
      key: { remoteJid: '15550000001@s.whatsapp.net', fromMe: true, id },
      type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
      editedMessage: { conversation: 'edited!' },
    },
  };
  const k = messageSecretKey('Message Edit', id, opts.orig, opts.modifier, SECRET);
  const { encPayload, encIv } = sealMessageSecret(proto.Message.encode(inner).finish(), k, IV);
  return {
    key: { id: '3EB0SECRETEDIT', fromMe: false, ...opts.key },
    message: {
      secretEncryptedMessage: {
        targetMessageKey: { remoteJid: '15550000001@s.whatsapp.net', fromMe: true, id },
        encPayload,
        encIv,
        secretEncType: (opts.type ??
          proto.Message.SecretEncryptedMessage.SecretEncType.MESSAGE_EDIT) as never,
      },
      messageContextInfo: { messageSecret: SECRET },
    },
    messageTimestamp: 1_700_000_000,
  };
}

describe('messenger: secret-encrypted edits (whatsmeow fcbcaad5)', () => {
  it('When the key of a "Message Edit" is derived, then it is the vector from whatsmeow’s code path (HKDF, no additional data) and opens its ciphertext', () => {
    const info = Buffer.from(`ORIGID${PN}${PN}Message Edit`);
    expect(Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), info, 32)).toString('hex')).to.equal(
      VECTOR.key,
    );
    const k = messageSecretKey('Message Edit', 'ORIGID', `5511999999999:7@s.whatsapp.net`, PN, SECRET);
    expect(k.key.toString('hex')).to.equal(VECTOR.key);
    expect(k.additionalData).to.have.length(0);
    expect(sealMessageSecret(Buffer.from('edited!'), k, IV).encPayload.toString('hex')).to.equal(
      VECTOR.ciphertextOfEdited,
    );
    expect(openMessageSecret(Buffer.from(VECTOR.ciphertextOfEdited, 'hex'), IV, k)?.toString()).to.equal(
      'edited!',
    );
    // The simulator encrypts with the same key (its own implementation).
    expect(messageEditKey(SECRET, 'ORIGID', PN, PN).toString('hex')).to.equal(VECTOR.key);
    // A flipped byte, another secret or another editor: nothing opens.
    const tampered = Buffer.from(VECTOR.ciphertextOfEdited, 'hex');
    tampered[0]! ^= 1;
    expect(openMessageSecret(tampered, IV, k)).to.equal(undefined);
    const other = messageSecretKey('Message Edit', 'ORIGID', PN, LID, SECRET);
    expect(openMessageSecret(Buffer.from(VECTOR.ciphertextOfEdited, 'hex'), IV, other)).to.equal(undefined);
  });

  it('When the use case is "Poll Vote", then the same derivation binds id and voter as additional data, as Baileys’ decryptPollVote reads it', () => {
    const k = messageSecretKey('Poll Vote', 'POLLID', PN, LID, SECRET);
    expect(k.additionalData.toString()).to.equal(`POLLID\u0000${LID}`);
    const vote = proto.Message.PollVoteMessage.encode({ selectedOptions: [Buffer.alloc(32, 7)] }).finish();
    const { encPayload, encIv } = sealMessageSecret(vote, k, IV);
    const opened = decryptPollVote(
      { encPayload, encIv },
      { pollCreatorJid: PN, pollMsgId: 'POLLID', pollEncKey: SECRET, voterJid: LID },
    );
    expect(Buffer.from(opened.selectedOptions![0]!)).to.deep.equal(Buffer.alloc(32, 7));
  });

  it('When a contact’s MESSAGE_EDIT envelope arrives, then it opens to the plain path’s edit of the named message (one-to-one, LID chat, group member)', () => {
    const direct = parseSecretEdit(envelope({ key: { remoteJid: PN }, orig: PN, modifier: PN }))!;
    expect(direct).to.include({ kind: 'message_edit', targetPlatformMessageId: 'ORIGID' });
    expect(openSecretEdit(direct, SECRET)).to.deep.equal({
      platformMessageId: '3EB0SECRETEDIT',
      from: '5511999999999',
      contact: { phone: '5511999999999' },
      targetPlatformMessageId: 'ORIGID',
      text: 'edited!',
      at: new Date(1_700_000_000_000),
    });
    const lidChat = parseSecretEdit(
      envelope({ key: { remoteJid: LID, remoteJidAlt: PN }, orig: LID, modifier: LID }),
    )!;
    expect(openSecretEdit(lidChat, SECRET)).to.deep.include({
      text: 'edited!',
      contact: { phone: '5511999999999', lid: LID },
    });
    const member = parseSecretEdit(
      envelope({
        key: { remoteJid: '120363000000000001@g.us', participant: `${PN.replace('@', ':3@')}` },
        orig: PN,
        modifier: PN,
      }),
    )!;
    expect(openSecretEdit(member, SECRET)).to.deep.include({
      text: 'edited!',
      contact: { phone: '5511999999999' },
    });
  });

  it('When the secret was stored under the other addressing, then only the record’s JIDs open it (both senders tried, e46d104e / 1c97bf40)', () => {
    // The chat names the contact by its LID alone; its phone encrypted the original's sender as PN.
    const edit = parseSecretEdit(envelope({ key: { remoteJid: LID }, orig: PN, modifier: LID }))!;
    expect(openSecretEdit(edit, SECRET)).to.equal(undefined);
    expect(openSecretEdit(edit, SECRET, [PN, LID])).to.deep.include({ text: 'edited!' });
  });

  it('When the secret is wrong, the inner message is no edit of that message, or it is a poll kind, then nothing is opened', () => {
    const ok = parseSecretEdit(envelope({ key: { remoteJid: PN }, orig: PN, modifier: PN }))!;
    expect(openSecretEdit(ok, Buffer.alloc(32, 1))).to.equal(undefined);
    const revoke = parseSecretEdit(
      envelope({
        key: { remoteJid: PN },
        orig: PN,
        modifier: PN,
        inner: {
          protocolMessage: { key: { id: 'ORIGID' }, type: proto.Message.ProtocolMessage.Type.REVOKE },
        },
      }),
    )!;
    expect(openSecretEdit(revoke, SECRET)).to.equal(undefined);
    const elsewhere = parseSecretEdit(
      envelope({
        key: { remoteJid: PN },
        orig: PN,
        modifier: PN,
        inner: {
          protocolMessage: {
            key: { id: 'OTHER' },
            type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
            editedMessage: { conversation: 'x' },
          },
        },
      }),
    )!;
    expect(openSecretEdit(elsewhere, SECRET)).to.equal(undefined);
    const addOption = parseSecretEdit(
      envelope({ key: { remoteJid: PN }, orig: PN, modifier: PN, type: SECRET_ENC_POLL_ADD_OPTION }),
    )!;
    expect(addOption.kind).to.equal('poll_add_option');
    expect(useCaseOf(SECRET_ENC_POLL_ADD_OPTION)).to.equal('Poll Edit');
    expect(openSecretEdit(addOption, SECRET)).to.equal(undefined);
    // Ours, a broadcast, or a plain message: no secret edit.
    expect(
      parseSecretEdit(envelope({ key: { remoteJid: PN, fromMe: true }, orig: PN, modifier: PN })),
    ).to.equal(undefined);
    expect(
      parseSecretEdit(
        envelope({ key: { remoteJid: 'status@broadcast', participant: PN }, orig: PN, modifier: PN }),
      ),
    ).to.equal(undefined);
    expect(parseSecretEdit({ key: { remoteJid: PN, id: 'X' }, message: { conversation: 'hi' } })).to.equal(
      undefined,
    );
  });

  it('When a message carries a 32-byte messageSecret, then it is what the record keeps; anything else is not', () => {
    const msg = (secret: Buffer): WAMessage => ({
      key: { remoteJid: PN, id: 'A' },
      message: { conversation: 'hi', messageContextInfo: { messageSecret: secret } },
    });
    expect(messageSecretOf(msg(SECRET)).messageSecret).to.deep.equal(SECRET);
    expect(messageSecretOf(msg(Buffer.alloc(5)))).to.deep.equal({});
  });
});
