import { expect } from 'chai';
import { said, type MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { labelChat } from './label-chat.js';
import { applying, labelFixture } from './label-fixture.js';

describe('labelChat: a chat given or relieved of a label through the holder (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let deviceId: string;

  beforeEach(() => {
    ({ fx, deps, deviceId } = labelFixture());
  });

  it('When a chat gets or loses a label, then the answer is the holder’s with the label and which it was', async () => {
    const heard = fx.fakeSender(deviceId, applying);

    expect(
      await labelChat(deps, deviceId, { chat: '15550000001', labelId: '5', labeled: true }),
    ).to.deep.equal({
      ok: true,
      data: { chat: '15550000001', applied: true, labelId: '5', labeled: true },
    });
    expect(
      await labelChat(deps, deviceId, { chat: '15550000001', labelId: '5', labeled: false }),
    ).to.deep.equal({ ok: true, data: { chat: '15550000001', applied: true, labelId: '5', labeled: false } });
    expect(heard.map(said)).to.deep.equal([
      { type: 'app-state-chat-label', deviceId, chat: '15550000001', labelId: '5', labeled: true },
      { type: 'app-state-chat-label', deviceId, chat: '15550000001', labelId: '5', labeled: false },
    ]);
  });

  it('When the device is not connected, then no_device and the holder is not asked', async () => {
    const heard = fx.fakeSender(deviceId, applying);

    fx.sessions.update(deviceId, 'connecting');
    expect(
      await labelChat(deps, deviceId, { chat: '15550000001', labelId: '5', labeled: true }),
    ).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.deep.equal([]);
  });
});
