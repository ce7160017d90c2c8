import type { DeviceCommand, DeviceCommandReply, GroupDetail } from '@mgw/contracts';
import { MemoryHolder, type HolderAnswer } from '../test-support.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): what the group use cases' fast tests
 * (`<use-case>.test.ts` beside each) share — a group as the holder answers it, and an in-memory
 * holder answering as the sender's group-commands.ts.
 */
export const gid = '120363012345678901@g.us';
/** A group's invite code. */
export const CODE = 'AbCdEfGhIjKlMnOpQrStUv';
export const detail: GroupDetail = {
  id: gid,
  subject: 'Team',
  size: 2,
  announce: false,
  isAdmin: true,
  locked: false,
  participants: [{ contact: { phone: '15551234567' }, admin: true }],
};
/** How adding or changing two members went: one did, one was not allowed. */
export const outcomes = [
  { participant: '15551234567', ok: true },
  { participant: '15557654321', ok: false, reason: 'not_allowed', code: '403' },
];
/** The group's invite as the holder reads it. */
export const invite = { id: gid, code: CODE, link: `https://chat.whatsapp.com/${CODE}` };

/** What the commands said, without their request and device ids. */
export const unaddressed = (heard: DeviceCommand[]) =>
  heard.map(({ requestId: _r, deviceId: _d, ...rest }) => rest);

/** A fresh in-memory holder, and connected devices of it answering as a test says. */
export function groupFixture() {
  const fx = new MemoryHolder();
  const { holder } = fx;
  /** A connected device whose holder answers with `answer`: its id and the commands it heard. */
  async function heldDevice(answer: HolderAnswer) {
    const deviceId = fx.freshDevice('cg');
    fx.connect(deviceId);
    const heard = fx.fakeSender(deviceId, answer);
    return { deviceId, heard };
  }
  /** A connected device whose holder answers each command by its type. */
  const answeringByType = (answer: (type: string) => DeviceCommandReply) =>
    heldDevice((cmd) => answer(cmd.type));
  /** A device never connected, whose holder would answer `answer`: its id and the commands it heard. */
  function offlineDevice(answer: HolderAnswer) {
    const deviceId = fx.freshDevice('cg');
    return { deviceId, heard: fx.fakeSender(deviceId, answer) };
  }
  return { fx, holder, heldDevice, answeringByType, offlineDevice };
}
export type GroupFixture = ReturnType<typeof groupFixture>;
