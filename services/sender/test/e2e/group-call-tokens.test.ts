import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface GroupRequest {
  kind: 'create' | 'add';
  group?: string;
  participants: { jid: string; phone?: string; privacy: 'valid' | 'invalid' | 'none' }[];
}
interface Outcome {
  participant: string;
  ok: boolean;
}
interface SimCall {
  id: string;
  state: string;
  rejectsWithTctoken?: number;
}

/**
 * Privacy tokens on group requests and call rejects (whatsmeow 00ce57f2, 592721a0;
 * docs/contacts-and-identities.md): a contact who wrote to the account issued it a tctoken, which
 * a group creation and a participant add carry for it (`<participant><privacy>`); a contact who
 * never wrote gets none. A call reject carries no token (whatsmeow took it back: the simulator,
 * like WhatsApp in whatsmeow issue #1182, ignores a reject that carries one).
 */
describe('e2e: privacy tokens on group creation, participant adds and call rejects (real client, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({ allInOne: true });
  const account = '15551920001';
  // ana and cai write to the account (tokens); ben and dan never do.
  const [ana, ben, cai, dan] = ['15551920011', '15551920012', '15551920013', '15551920014'];
  const lids = new Map<string, string>();

  before(async () => {
    await stack().linkByQr(account);
    // Strict first contacts on: they do not gate group requests (no refusal is known for them).
    await stack().simApi('POST', '/reachout/strict', { on: true, phone: account });
    for (const phone of [ana, ben, cai, dan]) {
      const view = await stack().simApi<{ lid: string }>('POST', '/contacts', { phone });
      lids.set(phone, `${view.lid}@lid`);
    }
    for (const phone of [ana, cai]) {
      await stack().simApi('POST', `/contacts/${phone}/send`, { to: account, text: `hi from ${phone}` });
      // The token the contact's phone issued (its notification came before the message), by LID.
      await waitFor(
        async () =>
          (await stack().redis.hexists(keys.authKeys(stack().deviceId, 'tctoken'), lids.get(phone)!)) === 1,
        { what: `the tctoken of ${phone} kept` },
      );
    }
  });

  const groupRequests = async (): Promise<GroupRequest[]> =>
    (await stack().simApi<{ requests: GroupRequest[] }>('GET', `/accounts/${account}/group-requests`))
      .requests;
  const tokensOf = (request: GroupRequest) =>
    Object.fromEntries(request.participants.map((p) => [p.phone, p.privacy]));

  it('When the account creates a group and adds members, then each contact who wrote to it is named with its valid tctoken, by phone or by LID, and each who never wrote with none; every one is added', async () => {
    const created = await stack().api<{ data: { group: { id: string }; participants: Outcome[] } }>(
      'POST',
      '/groups',
      { subject: 'Tokens', participants: [ana, ben] },
    );
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body.data.participants).to.deep.equal([
      { participant: ana, ok: true },
      { participant: ben, ok: true },
    ]);
    const id = created.body.data.group.id;
    const add = await stack().api<{ data: { participants: Outcome[] } }>(
      'POST',
      `/groups/${id}/participants`,
      { action: 'add', participants: [lids.get(cai)!, dan] },
    );
    expect(add.status, JSON.stringify(add.body)).to.equal(200);
    expect(add.body.data.participants).to.deep.equal([
      { participant: lids.get(cai)!, ok: true },
      { participant: dan, ok: true },
    ]);
    const mine = (await groupRequests()).filter((r) => r.group === id);
    expect(mine.map((r) => r.kind)).to.deep.equal(['create', 'add']);
    expect(tokensOf(mine[0]!)).to.deep.equal({ [ana]: 'valid', [ben]: 'none' });
    expect(tokensOf(mine[1]!)).to.deep.equal({ [cai]: 'valid', [dan]: 'none' });
    expect(mine[1]!.participants.map((p) => p.jid)).to.deep.equal([lids.get(cai), `${dan}@s.whatsapp.net`]);
    const view = await stack().simApi<{ participants: { phone: string }[] }>('GET', `/groups/${id}`);
    expect(view.participants.map((p) => p.phone).sort()).to.deep.equal([account, ana, ben, cai, dan].sort());
  });

  it('When rejectCalls is on and a contact who wrote (tctoken held) or one who never did calls, then each call is rejected, with no tctoken on the reject', async () => {
    const set = await stack().api('PATCH', '/settings', { rejectCalls: true, rejectCallMessage: null });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    try {
      for (const caller of [ana, ben]) {
        const call = await stack().simApi<SimCall>('POST', '/calls', { from: caller, to: account });
        let seen: SimCall = call;
        await waitFor(
          async () => (seen = await stack().simApi<SimCall>('GET', `/calls/${call.id}`)).state === 'rejected',
          { timeoutMs: 10_000, what: `the call of ${caller} rejected` },
        );
        expect(seen.rejectsWithTctoken, caller).to.equal(undefined);
      }
    } finally {
      await stack().api('PATCH', '/settings', { rejectCalls: false, rejectCallMessage: null });
    }
  });
});
