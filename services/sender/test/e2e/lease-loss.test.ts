import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface Lease {
  owner: string;
  epoch: number;
}

describe('e2e: a sender that loses its lease lets go of the device (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({ senders: 2 });

  before(async () => {
    await stack().linkByQr('15550700001');
  });

  const lease = async () =>
    JSON.parse((await stack().redis.get(keys.lease(stack().deviceId))) ?? 'null') as Lease | null;
  const holderOf = (l: Lease | null) =>
    stack()
      .senders()
      .find((p) => l?.owner.includes(`:${p.child.pid}:`));
  const leasesHeld = async (port: number) =>
    Number(
      /^mgw_leases_held (\d+)/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1],
    );

  it('When another owner takes the lease, then the old holder closes its socket at once and a sender takes over cleanly', async () => {
    const before = (await lease())!;
    const old = holderOf(before)!;
    expect(await leasesHeld(old.port)).to.equal(1);
    // An intruder takes the device with a newer epoch, as a process that won a race would.
    const epoch = await stack().redis.incr(keys.leaseEpoch(stack().deviceId));
    await stack().redis.set(
      keys.lease(stack().deviceId),
      JSON.stringify({ owner: 'intruder', epoch }),
      'PX',
      3000,
    );
    await waitFor(async () => (await leasesHeld(old.port)) === 0, { what: 'old holder lets go' });
    await waitFor(async () => ((await lease())?.epoch ?? 0) > epoch && Boolean(holderOf(await lease())), {
      timeoutMs: 30_000,
      what: 'a sender holds the device again',
    });
    // The old holder is on cool-down, so the other sender took it.
    expect(holderOf(await lease())!.name).to.not.equal(old.name);
    await stack().waitForStatus('connected');
    const sent = await stack().api<{ messageId: string }>('POST', '/send', {
      to: '15550700002',
      text: 'after takeover',
    });
    await waitFor(async () => (await stack().inbox('15550700002')).some((m) => m.text === 'after takeover'), {
      what: 'message after takeover',
    });
    const record = (
      await stack().api<{ data: { status: string } }>('GET', `/messages/${sent.body.messageId}`)
    ).body.data;
    expect(record.status).to.not.equal('failed');
  });
});
