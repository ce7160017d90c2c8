import { expect } from 'chai';
import { createMetrics, type DeviceCommandReply, type Metrics } from '@mgw/contracts';
import { MemoryHolder, said, type HolderAnswer } from '../test-support.js';
import { checkNumbers, type NumberCheckDeps } from './check-numbers.js';
import { MemoryContactCache, MemoryLookupCap } from './memory-contacts.js';

/**
 * The number check without an API: the device's contact cache, its daily lookup cap and the holder
 * looking up what the cache does not know (a fake sender that writes the cache as the real one
 * does: numbers ending in 0 are not on WhatsApp, the others are, with a LID) — all in memory.
 */
describe('checkNumbers: the number check from the cache and the holder (an in-memory holder)', () => {
  const CAP = 5;
  let mh: MemoryHolder;
  let metrics: Metrics;
  let cache: MemoryContactCache;
  let deps: NumberCheckDeps;

  beforeEach(() => {
    mh = new MemoryHolder();
    metrics = createMetrics();
    cache = new MemoryContactCache();
    deps = {
      sessions: mh.sessions,
      holder: mh.unchecked,
      cache,
      cap: new MemoryLookupCap(CAP, 7200),
      lookups: metrics.contactLookups,
      batchSize: 2,
      pauseMs: 10,
    };
  });

  /** The numbers counted so far, by outcome. */
  async function counted(): Promise<Record<string, number>> {
    const { values } = await metrics.contactLookups.get();
    return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
  }
  /** A sender holding the device that looks numbers up and writes their answers to the cache. */
  const lookingUp: (deviceId: string) => HolderAnswer = (deviceId) => async (cmd) => {
    if (cmd.type !== 'check-contacts') return { ok: false, error: 'unexpected' };
    const answers = cmd.phones.map((p) => [
      p,
      p.endsWith('0')
        ? { onWhatsApp: false }
        : { onWhatsApp: true, jid: `${p}@s.whatsapp.net`, lid: `9${p}@lid` },
    ]);
    await cache.putMany(deviceId, new Map(answers as [string, { onWhatsApp: boolean }][]));
    return { ok: true };
  };
  function connectedDevice(answer?: (deviceId: string) => HolderAnswer) {
    const deviceId = mh.freshDevice('cn');
    mh.connect(deviceId);
    const heard = answer ? mh.fakeSender(deviceId, answer(deviceId)) : [];
    return { deviceId, heard };
  }

  it('When numbers are not cached, then the holder looks each up once, in paced batches, and the answers come in request order (duplicates answered twice)', async () => {
    const { deviceId, heard } = connectedDevice(lookingUp);
    await cache.putMany(deviceId, new Map([['15550100003', { onWhatsApp: false }]]));

    const outcome = await checkNumbers(deps, deviceId, [
      '15550100001',
      '15550100010',
      '15550100001',
      '15550100003',
    ]);

    const found = {
      phone: '15550100001',
      onWhatsApp: true,
      lid: '915550100001@lid',
      phoneJid: '15550100001@s.whatsapp.net',
    };
    expect(outcome).to.deep.equal({
      ok: true,
      data: {
        results: [
          found,
          { phone: '15550100010', onWhatsApp: false },
          found,
          { phone: '15550100003', onWhatsApp: false },
        ],
      },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'check-contacts', phones: ['15550100001', '15550100010'], batchSize: 2, pauseMs: 10, deviceId },
    ]);
    expect(await counted()).to.deep.equal({ cache_hit: 1, looked_up: 2 });
  });

  it('When every number is cached, then the answer comes from the cache, the holder is not asked and nothing counts against the cap', async () => {
    const { deviceId } = connectedDevice();
    const heard = mh.fakeSender(deviceId, () => ({ ok: true }));
    await cache.putMany(
      deviceId,
      new Map([
        ['15550100001', { onWhatsApp: true, jid: '15550100001@s.whatsapp.net' }],
        ['15550100010', { onWhatsApp: false }],
      ]),
    );

    expect(await checkNumbers(deps, deviceId, ['15550100010', '15550100001'])).to.deep.equal({
      ok: true,
      data: {
        results: [
          { phone: '15550100010', onWhatsApp: false },
          { phone: '15550100001', onWhatsApp: true, phoneJid: '15550100001@s.whatsapp.net' },
        ],
      },
    });
    expect(heard).to.deep.equal([]);
    expect(await counted()).to.deep.equal({ cache_hit: 2 });
    expect(await deps.cap.take(deviceId, CAP), 'the whole cap is left').to.deep.equal({ granted: true });
  });

  it('When the numbers not cached would pass the daily cap, then capped with when the window ends, nothing is asked, and none of them is counted against the cap', async () => {
    const { deviceId, heard } = connectedDevice(lookingUp);
    const phones = Array.from({ length: CAP + 1 }, (_, i) => String(15550200001 + i));

    expect(await checkNumbers(deps, deviceId, phones)).to.deep.equal({
      ok: false,
      reason: 'capped',
      resetInSeconds: 7200,
    });
    expect(heard).to.deep.equal([]);
    expect(await counted()).to.deep.equal({ cache_hit: 0, capped: CAP + 1 });
    // All or none: the cap still has room for CAP numbers.
    expect((await checkNumbers(deps, deviceId, phones.slice(0, CAP))).ok).to.equal(true);
  });

  it('When the device is not connected, then no_device before the cache is read or anything counted', async () => {
    const deviceId = mh.freshDevice('cn');
    mh.sessions.update(deviceId, 'connecting');
    const heard = mh.fakeSender(deviceId, lookingUp(deviceId));

    expect(await checkNumbers(deps, deviceId, ['15550100001'])).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.deep.equal([]);
    expect(await counted()).to.deep.equal({});
  });

  it("When the holder cannot look the numbers up, then the holder's outcome: nobody holds the device, it failed, its socket is not open", async () => {
    const nobody = connectedDevice();
    expect(await checkNumbers(deps, nobody.deviceId, ['15550100001'])).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });

    const replies: DeviceCommandReply[] = [
      { ok: false, error: 'lookup failed' },
      { ok: false, error: 'not-connected' },
    ];
    const { deviceId } = connectedDevice(() => () => replies.shift());
    expect(await checkNumbers(deps, deviceId, ['15550100001'])).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'lookup failed',
    });
    expect(await checkNumbers(deps, deviceId, ['15550100002'])).to.deep.equal({
      ok: false,
      reason: 'not_connected',
    });
    expect(await cache.getMany(deviceId, ['15550100001', '15550100002'])).to.have.property('size', 0);
  });

  it('When the holder answers but an answer is not in the cache (it expired in between), then answers_expired: no answer is invented', async () => {
    const { deviceId } = connectedDevice((id) => async (cmd) => {
      // Writes the first number's answer only, as a cache whose TTL ran out under the check would.
      if (cmd.type === 'check-contacts')
        await cache.putMany(id, new Map([[cmd.phones[0]!, { onWhatsApp: false }]]));
      return { ok: true };
    });

    expect(await checkNumbers(deps, deviceId, ['15550100010', '15550100020'])).to.deep.equal({
      ok: false,
      reason: 'answers_expired',
    });
  });

  it('When the holder never answers, then timeout; the check waits for it by its number of batches and their pauses', async () => {
    const { deviceId, heard } = connectedDevice(() => () => undefined);
    const phones = ['15550100001', '15550100002', '15550100003', '15550100004', '15550100005'];

    expect(await checkNumbers(deps, deviceId, phones)).to.deep.equal({ ok: false, reason: 'timeout' });
    // Three queries of two: 3 × 20 s each, 2 pauses of 10 ms, and 15 s to spare, rounded up.
    expect(mh.asked.map((a) => a.waitSeconds)).to.deep.equal([Math.ceil(3 * 20 + (2 * 10) / 1000 + 15)]);
    expect(heard).to.have.length(1);
  });
});
