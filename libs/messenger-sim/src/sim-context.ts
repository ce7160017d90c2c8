/**
 * The narrow contexts the simulator's modules take instead of the Simulator class: each module
 * names, in an interface it exports, the few members of the simulator it uses; the Simulator
 * (simulator.ts) has them all and passes itself. A module importing simulator.ts would close a
 * cycle, as simulator.ts imports the modules. Here are the pieces several contexts share, and
 * the whole context of the modules that need no more than one of them.
 */
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { CompanionDevice, Directory } from './directory.js';

/** The simulator's settings (GET and PUT /config); the receipts read them (receipts.ts). */
export interface SimulatorConfig {
  /** Delay before a recipient's delivery receipt; null disables delivery receipts. */
  receiptDelayMs: number | null;
  /** Delay (from the send) before the read receipt; null disables read receipts. */
  readDelayMs: number | null;
}

/** The simulated network's users, their devices and chats. */
export interface DirectoryContext {
  readonly directory: Directory;
}

/** Sending to linked devices. */
export interface DeliveryContext {
  /** Sends to a device's live socket, or keeps the stanza until its next login. */
  deliverToDevice(device: CompanionDevice, stanza: BinaryNode): void;
}
