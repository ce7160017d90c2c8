import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, linkTestDevice, sleep, until, type TestDevice } from '@mgw/testing';
import { startSimulator, type SimulatorHandle } from '../../src/index.js';
import { SAVE_COST_FACTOR, StateWriter, type SavedState } from '../../src/persistence.js';

describe('messenger-sim: a state file keeps the simulated network across restarts', function () {
  this.timeout(60_000);
  let dir: string;
  let sim: SimulatorHandle | undefined;
  let device: TestDevice | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-sim-state-'));
  });
  afterEach(async () => {
    await device?.end();
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('When the simulator restarts on its state file, then a linked device logs in again, stays connected and writes to the same contact, who decrypts it', async () => {
    const stateFile = path.join(dir, 'sandbox-state.json');
    const port = await freePort();
    const start = () => startSimulator({ port, stateFile, receiptDelayMs: 100, readDelayMs: 200 });
    sim = await start();
    const account = '15550003001';
    const contact = '15550003002';
    device = await linkTestDevice(sim, account);
    const jid = `${contact}@s.whatsapp.net`;
    const first = await device.sock!.sendMessage(jid, { text: 'before the restart' });
    await until(() => sim!.inbox(contact).find((m) => m.id === first!.key.id));
    const lid = sim.upsertContact({ phone: contact }).lid;

    // the sandbox stops (its state written on the way out) while the gateway's device waits
    await device.end();
    await sim.close();
    expect((await stat(stateFile)).mode & 0o777).to.equal(0o600);
    sim = await start();

    const closesBefore = device.closes.length;
    device.connect();
    await device.waitForOpen();
    await sleep(1_500);
    expect(device.closes.slice(closesBefore)).to.deep.equal([]);
    expect(sim.devices(account).map((d) => d.connected)).to.deep.equal([true]);
    expect(sim.upsertContact({ phone: contact }).lid).to.equal(lid);
    const second = await device.sock!.sendMessage(jid, { text: 'after the restart' });
    const got = await until(() => sim!.inbox(contact).find((m) => m.id === second!.key.id));
    expect(got.text).to.equal('after the restart');
    expect(sim.undecryptable(contact)).to.deep.equal([]);
    // and the contact writes back over the same sessions
    const inbound = waitForText(device, 'hello again');
    await sim.sendInbound(contact, account, 'hello again');
    await inbound;
  });

  it('When the state file is not a simulator state, then the start fails naming the file, and the file is left as it was', async () => {
    const stateFile = path.join(dir, 'sandbox-state.json');
    await writeFile(stateFile, 'not json');
    const error = await startSimulator({ port: 0, stateFile }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).to.include(stateFile).and.include('move it away');
    expect(await readFile(stateFile, 'utf8')).to.equal('not json');
  });

  it('When a save is costly (a busy sandbox), then the next waits in proportion: the writer takes ~2 % of the time, not a save a second', async () => {
    let changes = 0;
    let saves = 0;
    const savedAt: number[] = [];
    const quiet = { error: () => undefined } as never;
    const writer = new StateWriter(
      path.join(dir, 'state.json'),
      () => ++changes, // always changed
      () => {
        saves++;
        savedAt.push(Date.now());
        const until = Date.now() + 60; // a 60 ms serialisation: the next not before ~3 s
        while (Date.now() < until) {
          // the cost of a big state
        }
        return { version: 1, saves } as unknown as SavedState;
      },
      quiet,
    );
    try {
      // Two periodic saves, waited for (a fixed 4.5 s window fits fewer on a loaded host).
      await until(() => saves >= 2, 30_000, 'two periodic saves');
    } finally {
      writer.stop();
    }
    // Once a second would put them 1 s apart; in proportion to the cost, at least the cost times
    // SAVE_COST_FACTOR (a lower bound: load only spreads them more).
    expect(SAVE_COST_FACTOR * 60).to.be.at.least(3000);
    expect(savedAt[1]! - savedAt[0]!, 'ms between two saves').to.be.at.least(3000);
    expect(saves, "the two and the stop's").to.equal(3);
    expect(JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8'))).to.deep.equal({
      version: 1,
      saves,
    });
  });

  it('When no state file is given (the tests), then a restarted simulator knows no device', async () => {
    const port = await freePort();
    sim = await startSimulator({ port });
    device = await linkTestDevice(sim, '15550003011');
    await device.end();
    await sim.close();
    sim = await startSimulator({ port });
    device.connect();
    const closed = await device.waitForClose();
    expect(closed.statusCode).to.equal(401);
  });
});

/** Resolves once the device receives a text message with `text`. */
function waitForText(device: TestDevice, text: string): Promise<void> {
  return new Promise((resolve) => {
    device.sock!.ev.on('messages.upsert', ({ messages }) => {
      if (messages.some((m) => m.message?.conversation === text)) resolve();
    });
  });
}
