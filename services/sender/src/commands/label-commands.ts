import { serializeError, type Logger } from '@mgw/common';
import { memberJid, type DeviceCommandReply, type LabelCommand, isGroupAddress } from '@mgw/contracts';
import { whatsappErrorCode, type DeviceSocket } from '@mgw/messenger';

/** How long the holder waits for its socket to open before it answers that it cannot. */
const OPEN_WAIT_MS = 5_000;
/** A mute without a length lasts 8 hours, WhatsApp's shortest choice. */
const DEFAULT_MUTE_SECONDS = 8 * 3600;

/** A chat as the API names it, as a JID. */
const chatJid = (chat: string) => (isGroupAddress(chat) ? chat : memberJid(chat));

/**
 * Labels and chat state, the holder's half: each is an app-state patch Baileys makes with the
 * account's app-state key (shared by the phone) and sends after syncing the collection; the phone
 * and the other linked devices see it. Without the key there is nothing to sign with: `no-key`.
 * The answer waits for the patch's own notice to be kept in the label store, so the caller reads
 * what it wrote (a label just created can be deleted at once).
 */
export async function runLabelCommand(
  conn: DeviceSocket,
  cmd: LabelCommand,
  deps: {
    /** Once the notices seen so far are kept: the patch's own notice is among them. */
    settled: () => Promise<void>;
    logger: Logger;
  },
): Promise<DeviceCommandReply> {
  const { settled, logger } = deps;
  if (!(await conn.waitForOpen(OPEN_WAIT_MS))) return { ok: false, error: 'not-connected' };
  const sock = conn.socket;
  if (!sock) return { ok: false, error: 'not-connected' };
  if (!sock.authState.creds.myAppStateKeyId) return { ok: false, error: 'no-key' };
  try {
    switch (cmd.type) {
      case 'app-state-label':
        await sock.addLabel('', { ...cmd.label, predefinedId: undefined });
        await settled();
        return { ok: true, data: { label: cmd.label } };
      case 'app-state-chat-label': {
        const jid = chatJid(cmd.chat);
        if (cmd.labeled) await sock.addChatLabel(jid, cmd.labelId);
        else await sock.removeChatLabel(jid, cmd.labelId);
        await settled();
        return { ok: true, data: { chat: cmd.chat, applied: true } };
      }
      case 'app-state-chat': {
        const jid = chatJid(cmd.chat);
        const { archived, pinned, muted, muteSeconds } = cmd.state;
        if (archived !== undefined) await sock.chatModify({ archive: archived, lastMessages: [] }, jid);
        if (pinned !== undefined) await sock.chatModify({ pin: pinned }, jid);
        if (muted !== undefined)
          await sock.chatModify(
            { mute: muted ? Date.now() + (muteSeconds ?? DEFAULT_MUTE_SECONDS) * 1000 : null },
            jid,
          );
        await settled();
        return { ok: true, data: { chat: cmd.chat, applied: true } };
      }
    }
  } catch (err) {
    logger.warn('app-state request failed', {
      type: cmd.type,
      status: whatsappErrorCode(err),
      err: serializeError(err),
    });
    return { ok: false, error: 'failed' };
  }
}
