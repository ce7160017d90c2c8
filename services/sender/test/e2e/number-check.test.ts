import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface CheckBody {
  success: boolean;
  data: { results: { phone: string; onWhatsApp: boolean; lid?: string }[] };
  error?: string;
  resetIn?: number;
}

describe('e2e: the number check, its cache shared with sends, its pacing and its daily cap (real services, simulator)', function () {
  this.timeout(180_000);
  const PAUSE_MS = 400;
  const stack = useStack({
    sim: { receiptDelayMs: 300, readDelayMs: null },
    env: {
      CONTACT_LOOKUP_BATCH_SIZE: '10',
      CONTACT_LOOKUP_PAUSE_MS: String(PAUSE_MS),
      CONTACT_LOOKUPS_PER_DAY: '60',
    },
  });
  const account = '15550500001';
  const phones = Array.from({ length: 50 }, (_, i) => `155505${String(100 + i).padStart(5, '0')}`);
  // Every fifth number has no WhatsApp account: 10 of the 50.
  const offWhatsApp = new Set(phones.filter((_, i) => i % 5 === 4));

  before(async () => {
    await stack().linkByQr(account);
    for (const phone of offWhatsApp) await stack().simApi('POST', '/contacts', { phone, onWhatsApp: false });
  });

  const check = (numbers: string[]) => stack().api<CheckBody>('POST', '/contacts/check', { phones: numbers });

  function expectExactAnswers(body: CheckBody): void {
    expect(body.success).to.equal(true);
    expect(body.data.results.map((r) => [r.phone, r.onWhatsApp])).to.deep.equal(
      phones.map((p) => [p, !offWhatsApp.has(p)]),
    );
    for (const r of body.data.results) {
      if (r.onWhatsApp) expect(r.lid, r.phone).to.match(/^\d+@lid$/);
      else expect(r, r.phone).to.not.have.property('lid');
    }
  }

  it('When 50 numbers of which 10 are not on WhatsApp are checked, then each gets its exact answer in order, looked up in batches of 10 spaced by the pause', async () => {
    const res = await check(phones);

    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expectExactAnswers(res.body);
    const lookups = await stack().contactLookups(account);
    expect(lookups.count).to.equal(50);
    expect(lookups.queries.map((q) => q.numbers)).to.deep.equal([10, 10, 10, 10, 10]);
    const times = lookups.queries.map((q) => Date.parse(q.at));
    for (let i = 1; i < times.length; i++)
      expect(times[i]! - times[i - 1]!, `gap before query ${i}`).to.be.at.least(PAUSE_MS);
  });

  it('When the same 50 are checked again, then the same answers come from the cache: no new lookup at WhatsApp', async () => {
    const res = await check(phones);

    expect(res.status).to.equal(200);
    expectExactAnswers(res.body);
    expect((await stack().contactLookups(account)).count).to.equal(50);
  });

  it('When a list is sent to all 50, then the 40 on WhatsApp arrive and the 10 others fail not_on_whatsapp, with no lookup at all', async () => {
    const res = await stack().api<{ success: boolean; messageIds: string[] }>('POST', '/send', {
      to: phones,
      text: 'checked list',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);

    const records: Record<string, string>[] = [];
    await waitFor(
      async () => {
        records.length = 0;
        for (const id of res.body.messageIds)
          records.push(
            (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${id}`)).body.data,
          );
        return records.every((r) => r.status !== 'queued');
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'every list message leaves queued' },
    );
    for (let i = 0; i < phones.length; i++) {
      const phone = phones[i]!;
      const inbox = await stack().inbox(phone);
      if (offWhatsApp.has(phone)) {
        expect(records[i], phone).to.include({ status: 'failed', error: 'not_on_whatsapp' });
        expect(inbox, phone).to.deep.equal([]);
      } else {
        expect(records[i]!.status, phone).to.be.oneOf(['sent', 'delivered', 'read']);
        expect(
          inbox.map((m) => m.text),
          phone,
        ).to.deep.equal(['checked list']);
      }
    }
    expect((await stack().contactLookups(account)).count).to.equal(50);
  });

  it("When a send looked a number up, then a check of it is answered from the send's lookup", async () => {
    const [on, off] = ['15550507001', '15550507002'];
    await stack().simApi('POST', '/contacts', { phone: off, onWhatsApp: false });
    for (const to of [on, off]) {
      const sent = await stack().api<{ messageId: string }>('POST', '/send', { to, text: 'unchecked' });
      await waitFor(
        async () =>
          (await stack().api<{ data: { status: string } }>('GET', `/messages/${sent.body.messageId}`)).body
            .data.status !== 'queued',
        { what: `the send to ${to} settles` },
      );
    }
    expect((await stack().contactLookups(account)).count).to.equal(52);

    const res = await check([off, on]);

    expect(res.status).to.equal(200);
    expect(res.body.data.results.map((r) => [r.phone, r.onWhatsApp])).to.deep.equal([
      [off, false],
      [on, true],
    ]);
    expect(res.body.data.results[1]!.lid).to.match(/^\d+@lid$/);
    expect((await stack().contactLookups(account)).count).to.equal(52);
  });

  it('When a check would pass the daily lookup cap, then 429 with resetIn and nothing is looked up; a check within it still goes', async () => {
    const fresh = Array.from({ length: 15 }, (_, i) => `155506${String(100 + i).padStart(5, '0')}`);

    const over = await check([...phones.slice(0, 5), ...fresh]);

    expect(over.status, JSON.stringify(over.body)).to.equal(429);
    expect(over.body).to.include({ success: false, error: ERRORS.rateLimited });
    expect(over.body.resetIn)
      .to.be.a('number')
      .within(1, 24 * 3600);
    expect((await stack().contactLookups(account)).count).to.equal(52);

    // The cap counts the checks' lookups only (50 of 60): the sends' two are the send policy's.
    const within = await check(fresh.slice(0, 10));
    expect(within.status, JSON.stringify(within.body)).to.equal(200);
    expect((await stack().contactLookups(account)).count).to.equal(62);
  });
});
