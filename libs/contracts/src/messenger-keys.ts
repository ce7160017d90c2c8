/**
 * Redis keys and channels of the messenger capability (connection + sender services).
 * Same `mgw:` prefix as `keys`; kept in their own file so `keys.ts` stays untouched.
 */
const P = 'mgw';

export const messengerKeys = {
  /**
   * String (base64 of the proto `Message`) of a message we sent, by its WhatsApp id: Baileys'
   * `getMessage` re-encrypts it on a retry receipt, and a reply quotes it. TTL = message retention.
   */
  messageProto: (deviceId: string, platformMessageId: string) =>
    `${P}:msg-proto:${deviceId}:${platformMessageId}`,
  /** Hash: the pairing in progress for a device (current QR / pairing code, owner), with a TTL. */
  pairing: (deviceId: string) => `${P}:pairing:${deviceId}`,
  /** Hash per device: recipient phone -> JID on WhatsApp, or "" when the number is not on WhatsApp. */
  contacts: (deviceId: string) => `${P}:wa-contacts:${deviceId}`,
  /** Pub/sub channel: commands to the sender that owns a device (e.g. logout). */
  deviceCommands: () => `${P}:events:device-commands`,
  /** List: the answer to one device command (the requester BLPOPs it). */
  commandReply: (requestId: string) => `${P}:cmd-reply:${requestId}`,
} as const;

/** A command published on `messengerKeys.deviceCommands()` for the owner of `deviceId`. */
export interface DeviceCommand {
  type: 'logout';
  deviceId: string;
  requestId: string;
}

/** The owner's answer, pushed on `messengerKeys.commandReply(requestId)`. */
export interface DeviceCommandReply {
  ok: boolean;
  error?: string;
}
