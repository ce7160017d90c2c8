import type { BinaryNode } from '@whiskeysockets/baileys';

/**
 * A linked device's live socket (`CompanionDevice.connection`), as those who send to the device
 * see it. ClientConnection (client-connection.ts) implements it; it lives apart so that
 * directory.ts, which client-connection.ts imports, need not import client-connection.ts back.
 */
export interface DeviceConnection {
  readonly closed: boolean;
  send(node: BinaryNode): void;
  /** Sends a terminal node (stream:error, failure) and closes once the client had a chance to read it. */
  endWith(node: BinaryNode, delayMs?: number): void;
}
