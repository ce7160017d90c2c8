import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { MemoryLabels } from './memory-labels.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): what the label use cases' fast tests
 * (`<use-case>.test.ts` beside each) set up alike — an in-memory holder with a connected device,
 * and the label store in memory.
 */
export interface LabelFixture {
  fx: MemoryHolder;
  deps: LabelDeps;
  store: MemoryLabels;
  deviceId: string;
}

/** A connected device of a fresh in-memory holder, with an empty label store: the changes' setup. */
export function labelFixture(): LabelFixture {
  const fx = new MemoryHolder();
  const store = new MemoryLabels();
  const deps = { holder: fx.holder, sessions: fx.sessions, store };
  const deviceId = fx.freshDevice('lc');
  fx.connect(deviceId);
  return { fx, deps, store, deviceId };
}

/**
 * The reads' setup: no holder to ask, a connected device that learnt two labels (`5` VIP on three
 * chats, `12` New order on none).
 */
export async function labelReadFixture(): Promise<
  Omit<LabelFixture, 'deps'> & { deps: Pick<LabelDeps, 'sessions' | 'store'> }
> {
  const fx = new MemoryHolder();
  const store = new MemoryLabels();
  const deps = { sessions: fx.sessions, store };
  const deviceId = fx.freshDevice('lr');
  fx.connect(deviceId);
  await store.edit(deviceId, { id: '5', name: 'VIP', color: 3, deleted: false });
  await store.edit(deviceId, { id: '12', name: 'New order', color: 1, deleted: false });
  for (const chat of ['15550000002', '15550000001', '120363000000000001@g.us'])
    await store.associate(deviceId, '5', chat, true);
  return { fx, deps, store, deviceId };
}

/** A holder that answers each command with its label (or the chat applied), as the real one does. */
export const applying = (cmd: DeviceCommand): DeviceCommandReply =>
  cmd.type === 'app-state-label'
    ? ({ ok: true, data: { label: cmd.label } } as DeviceCommandReply)
    : ({ ok: true, data: { chat: (cmd as { chat: string }).chat, applied: true } } as DeviceCommandReply);
