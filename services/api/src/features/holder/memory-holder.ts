import type { ConnectionStatus, DeviceCommand, DeviceCommandReply, SessionRecord } from '@mgw/contracts';
import { NOBODY_HOLDS_DEVICE, type DeviceCommandAnswer, type SessionStore } from '@mgw/store';
import type { DeviceHolder, HolderCommands } from './ask-holder.js';

/**
 * TEST SUPPORT, not used by the API: an in-memory device holder for the use cases' fast tests
 * (`features/<cap>/<use-case>.test.ts`) — no Redis, no sender process, no waiting. It answers
 * device commands as services/api/test/helpers/fake-holder.ts's fake senders do over Redis (and
 * as the real sender does, services/sender device-fleet.ts), with the session records in memory:
 *
 * - no fake sender at all: nobody listens for commands, the ask is `NOBODY_HOLDS_DEVICE` at once
 *   (on one Redis server a PUBLISH that no sender heard);
 * - fake senders, none holding the device: every sender hears the command, none answers — the
 *   ask's wait ends without a reply (`timeout`), at once rather than after the wait;
 * - the holder's handler answers `undefined`: a holder that hangs, also a timeout.
 *
 * A handler that throws fails the ask with its error (the test sees it, rather than a timeout).
 */

/** What a fake sender answers a command for its device with: a reply, or undefined (it hangs). */
export type HolderAnswer = (
  cmd: DeviceCommand,
) => DeviceCommandReply | undefined | Promise<DeviceCommandReply | undefined>;

/** A command as the asker sent it, and how long it said it would wait for the reply. */
export interface AskedCommand {
  command: DeviceCommand;
  waitSeconds: number;
}

/** The session records of devices, in memory: what `SessionStore.get` reads. */
export class MemorySessions implements Pick<SessionStore, 'get' | 'update' | 'markDisconnected'> {
  private readonly records = new Map<string, SessionRecord>();

  async get(deviceId: string): Promise<SessionRecord> {
    return { ...(this.records.get(deviceId) ?? { status: 'disconnected' }) };
  }

  /**
   * Sets the device's status and the given fields (the others kept), as `SessionStore.update` does
   * (at once: a test may call it without waiting).
   */
  async update(
    deviceId: string,
    status: ConnectionStatus,
    fields: Partial<SessionRecord> = {},
  ): Promise<void> {
    this.records.set(deviceId, { ...this.records.get(deviceId), ...fields, status });
  }

  /** Disconnected with the reason, the account's details gone, as `SessionStore.markDisconnected` does. */
  async markDisconnected(deviceId: string, reason: string): Promise<void> {
    const {
      phone: _p,
      name: _n,
      profilePic: _pic,
      connectedAt: _c,
      ...rest
    } = this.records.get(deviceId) ?? {};
    this.records.set(deviceId, { ...rest, status: 'disconnected', lastDisconnectReason: reason });
  }
}

/** What the command said, without its request id (a fresh one each time). */
export function said({ requestId: _requestId, ...rest }: DeviceCommand): Omit<DeviceCommand, 'requestId'> {
  return rest;
}

export class MemoryHolder {
  readonly sessions = new MemorySessions();
  /** Every command asked, in order, whether a sender heard it or not. */
  readonly asked: AskedCommand[] = [];
  private readonly senders: { held: string; answer: HolderAnswer; heard: DeviceCommand[] }[] = [];
  private devices = 0;

  /** The device commands' client: what `DeviceHolder.commands` is given. */
  readonly commands: HolderCommands = {
    ask: async (command: DeviceCommand, waitSeconds: number): Promise<DeviceCommandAnswer> => {
      this.asked.push({ command, waitSeconds });
      if (this.senders.length === 0) return NOBODY_HOLDS_DEVICE;
      for (const sender of this.senders) sender.heard.push(command);
      const holder = this.senders.find((s) => s.held === command.deviceId);
      return holder ? await holder.answer(command) : undefined;
    },
  };

  /** The holder a use case is given: asked with the session check (a device not connected is not asked). */
  readonly holder: DeviceHolder = { commands: this.commands, sessions: this.sessions };

  /** The holder of an asker that checked the session already, or needs no open socket (a download). */
  readonly unchecked: DeviceHolder = { commands: this.commands };

  /** A device id no other of this holder's devices has. */
  freshDevice(prefix = 'mh'): string {
    return `${prefix}-${++this.devices}`;
  }

  /** Marks the device's session connected (as the sender does once its socket is open). */
  connect(deviceId: string, fields: Partial<SessionRecord> = {}): void {
    this.sessions.update(deviceId, 'connected', fields);
  }

  /**
   * A sender holding `held`, answering its device's commands with `answer` (never, when that is
   * undefined). Answers the commands it heard, in order: every command asked from now on (a
   * sender hears them all and leaves alone those of devices it does not hold).
   */
  fakeSender(held: string, answer: HolderAnswer): DeviceCommand[] {
    const heard: DeviceCommand[] = [];
    this.senders.push({ held, answer, heard });
    return heard;
  }

  /** A connected device whose holder answers with `answer`: the commands it heard. */
  device(deviceId: string, answer: HolderAnswer): DeviceCommand[] {
    this.connect(deviceId);
    return this.fakeSender(deviceId, answer);
  }
}
