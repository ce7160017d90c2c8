import { expect } from 'chai';
import { said, type MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { applying, labelFixture } from './label-fixture.js';
import { setChatState } from './set-chat-state.js';

describe("setChatState: a chat's archive, pin or mute asked of the holder as given (an in-memory holder)", () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let deviceId: string;

  beforeEach(() => {
    ({ fx, deps, deviceId } = labelFixture());
  });

  it("When a chat's state changes, then the holder is asked with the state as given; a device not connected is not asked", async () => {
    const heard = fx.fakeSender(deviceId, applying);
    const state = { muted: true, muteSeconds: 3600 };

    expect(await setChatState(deps, deviceId, '120363000000000001@g.us', state)).to.deep.equal({
      ok: true,
      data: { chat: '120363000000000001@g.us', applied: true },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'app-state-chat', deviceId, chat: '120363000000000001@g.us', state },
    ]);

    fx.sessions.update(deviceId, 'connecting');
    expect(await setChatState(deps, deviceId, '15550000001', { pinned: true })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(1);
  });

  it("When the phone has not shared the app-state key, then the holder's no-key comes back as a failure with that code", async () => {
    fx.fakeSender(deviceId, () => ({ ok: false, error: 'no-key' }));
    expect(await setChatState(deps, deviceId, '15550000001', { archived: true })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-key',
    });
  });
});
