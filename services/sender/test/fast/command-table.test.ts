/**
 * The sender's device command table (src/commands/command-table.ts), with a fake device: every
 * command type has its handler, each family reaches its runner, and a type the table does not
 * know is handled as the if-chain it replaced handled it.
 */
import { expect } from 'chai';
import type { Logger } from '@mgw/common';
import {
  createMetrics,
  type DeviceCommand,
  type DeviceCommandReply,
  type DeviceCommandType,
  type Metrics,
} from '@mgw/contracts';
import { COMMANDS, runDeviceCommand, type CommandContext } from '../../src/commands/command-table.js';

/**
 * Every command type, once: a `Record` over the union's types, so the compiler refuses this list
 * when a type is added to (or removed from) `DeviceCommand` and the list is not changed with it.
 */
const EVERY_TYPE: Record<DeviceCommandType, true> = {
  logout: true,
  'download-media': true,
  'proxy-changed': true,
  'check-contacts': true,
  'mark-read': true,
  'groups-list': true,
  'group-get': true,
  'group-create': true,
  'group-participants': true,
  'group-leave': true,
  'group-update': true,
  'group-invite': true,
  'group-join': true,
  'account-profile-get': true,
  'account-profile-set': true,
  'account-photo-set': true,
  'account-photo-remove': true,
  'account-contact-profile': true,
  'account-presence-set': true,
  'account-presence-subscribe': true,
  'account-block': true,
  'account-usernames-resolve': true,
  'app-state-label': true,
  'app-state-chat-label': true,
  'app-state-chat': true,
  'channel-create': true,
  'channel-get': true,
  'channel-update': true,
  'channel-delete': true,
  'channel-follow': true,
  'channel-posts': true,
};

/** A device whose socket is not open, noting in `steps` what was done to it and answered, in order. */
function fakeDevice(opts: { logoutFails?: string } = {}) {
  const steps: string[] = [];
  const logs: { level: string; message: string; meta: unknown }[] = [];
  const metrics: Metrics = createMetrics();
  const note = (step: string) => async () => void steps.push(step);
  const logAt = (level: string) => (message: string, meta: unknown) => logs.push({ level, message, meta });
  const device = {
    conn: { waitForOpen: async () => false, socket: undefined, reconnectNow: note('reconnect') },
    contactChecks: {
      run: async (cmd: DeviceCommand): Promise<DeviceCommandReply> => {
        steps.push(`check ${cmd.requestId}`);
        return { ok: true };
      },
    },
    logout: async () => {
      steps.push('logout');
      if (opts.logoutFails) throw new Error(opts.logoutFails);
    },
    drainRetired: note('drain'),
    appState: { settled: async () => undefined },
  };
  const ctx = {
    device,
    reply: async (answer: DeviceCommandReply) => void steps.push(`reply ${JSON.stringify(answer)}`),
    giveUp: note('give up'),
    deps: {
      metrics,
      stores: { inbound: { mediaMessage: async () => undefined } },
      fetchers: { fetchMedia: async () => Buffer.alloc(0) },
    },
    logger: { error: logAt('error'), warn: logAt('warn'), info: logAt('info') } as unknown as Logger,
    fetchPhoto: async () => Buffer.alloc(0),
  } as unknown as CommandContext;
  /** Runs a command as it comes off pub/sub: parsed JSON, whatever its type. */
  const run = (cmd: Record<string, unknown>) =>
    runDeviceCommand({ deviceId: 'dev-1', requestId: 'req-1', ...cmd } as DeviceCommand, ctx);
  return { steps, logs, metrics, run };
}

const LOGGED_OUT = ['logout', 'reply {"ok":true}', 'drain', 'give up'];
const NOT_CONNECTED = ['reply {"ok":false,"error":"not-connected"}'];

describe('sender: the device command table', () => {
  it('When the table is read, then every DeviceCommand type has a handler, and nothing else has one', () => {
    expect(Object.keys(COMMANDS).sort()).to.deep.equal(Object.keys(EVERY_TYPE).sort());
    for (const handler of Object.values(COMMANDS)) expect(handler).to.be.a('function');
  });

  it('When a logout arrives, then the device is logged out, answered, drained and given up, in that order', async () => {
    const { steps, run } = fakeDevice();
    await run({ type: 'logout' });
    expect(steps).to.deep.equal(LOGGED_OUT);
  });

  it('When the logout fails, then its error is answered and logged, and the device is kept', async () => {
    const { steps, logs, run } = fakeDevice({ logoutFails: 'socket gone' });
    await run({ type: 'logout' });
    expect(steps).to.deep.equal(['logout', 'reply {"ok":false,"error":"socket gone"}']);
    expect(logs).to.have.length(1);
    expect(logs[0]).to.deep.include({ level: 'error', message: 'logout failed' });
    expect(logs[0]!.meta).to.deep.include({ deviceId: 'dev-1' });
  });

  it('When the proxy changed, then the socket reconnects before the answer', async () => {
    const { steps, run } = fakeDevice();
    await run({ type: 'proxy-changed' });
    expect(steps).to.deep.equal(['reconnect', 'reply {"ok":true}']);
  });

  it("When a number check arrives, then the device's contact checks run it and their answer is the reply", async () => {
    const { steps, run } = fakeDevice();
    await run({ type: 'check-contacts', phones: ['15550100001'], batchSize: 1, pauseMs: 0 });
    expect(steps).to.deep.equal(['check req-1', 'reply {"ok":true}']);
  });

  it('When a media download names a message without media, then "no media" is answered', async () => {
    const { steps, run } = fakeDevice();
    await run({ type: 'download-media', messageId: 'msg-1' });
    expect(steps).to.deep.equal(['reply {"ok":false,"error":"no media"}']);
  });

  it("When a command of each family arrives and the socket is not open, then its family's runner answers not-connected", async () => {
    for (const type of ['group-get', 'account-profile-get', 'mark-read', 'app-state-chat', 'channel-get']) {
      const { steps, run } = fakeDevice();
      await run({ type });
      expect(steps, type).to.deep.equal(NOT_CONNECTED);
    }
  });

  it('When a group or account command is answered, then its metric counts it by type and outcome', async () => {
    const { metrics, run } = fakeDevice();
    await run({ type: 'groups-list' });
    await run({ type: 'account-block' });
    expect((await metrics.groupCommands.get()).values).to.deep.include({
      value: 1,
      labels: { type: 'groups-list', outcome: 'failed' },
    });
    expect((await metrics.accountCommands.get()).values).to.deep.include({
      value: 1,
      labels: { type: 'account-block', outcome: 'failed' },
    });
  });

  describe('a type the table does not know (an API newer than this sender)', () => {
    it('When it arrives, then it is answered unknown-command, logged, and the device is left alone', async () => {
      for (const type of [
        'no-such-command',
        'constructor',
        'group-frobnicate',
        'account-x',
        'app-state-x',
        undefined,
      ]) {
        const { steps, logs, run } = fakeDevice();
        await run({ type });
        expect(steps, String(type)).to.deep.equal(['reply {"ok":false,"error":"unknown-command"}']);
        expect(logs, String(type)).to.have.length(1);
        expect(logs[0]).to.deep.include({
          level: 'warn',
          message: 'device command of an unknown type refused',
        });
      }
    });
  });
});
