import { expect } from 'chai';
import { USAGE_CSV_HEADER, type UsageDay } from '@mgw/store';
import { readUsage, usageCsv } from './usage.js';

/** A workspace's usage read over a range and written as CSV (the store faked: no Redis). */
describe("Workspaces: a workspace's usage per day, as JSON and CSV (in memory)", () => {
  const day = (d: string, counts: Partial<UsageDay>): UsageDay => ({
    day: d,
    accepted: 0,
    otp: 0,
    sent: 0,
    delivered: 0,
    read: 0,
    failed: 0,
    received: 0,
    mediaBytes: 0,
    failedByReason: {},
    ...counts,
  });
  const days = [
    day('2026-11-27', { accepted: 5, otp: 1, sent: 4, failed: 1, failedByReason: { not_on_whatsapp: 1 } }),
    day('2026-11-28', { accepted: 2, sent: 3, delivered: 2, read: 1, received: 7, mediaBytes: 900 }),
  ];
  const store = {
    asked: [] as unknown[],
    days(workspaceId: string, from: string, to: string) {
      this.asked.push([workspaceId, from, to]);
      return Promise.resolve(days);
    },
  };

  it('When a range is read, then the view holds its days and the sums of every count and reason', async () => {
    const view = await readUsage(store, 'acme', { from: '2026-11-27', to: '2026-11-28' });
    expect(store.asked).to.deep.equal([['acme', '2026-11-27', '2026-11-28']]);
    expect(view).to.deep.include({ workspaceId: 'acme', from: '2026-11-27', to: '2026-11-28', days });
    expect(view.total).to.deep.equal({
      accepted: 7,
      otp: 1,
      sent: 7,
      delivered: 2,
      read: 1,
      failed: 1,
      received: 7,
      mediaBytes: 900,
      failedByReason: { not_on_whatsapp: 1 },
    });
  });

  it('When the view is written as CSV, then a fixed header and one CRLF row per day, every reason a column', async () => {
    const csv = usageCsv(await readUsage(store, 'acme', { from: '2026-11-27', to: '2026-11-28' }));
    const lines = csv.split('\r\n');
    expect(lines).to.have.length(4);
    expect(lines[3]).to.equal('');
    expect(lines[0]).to.equal(USAGE_CSV_HEADER.join(','));
    const header = lines[0]!.split(',');
    const first = lines[1]!.split(',');
    expect(first.slice(0, 10)).to.deep.equal(['acme', '2026-11-27', '5', '1', '4', '0', '0', '1', '0', '0']);
    expect(first[header.indexOf('failed:not_on_whatsapp')]).to.equal('1');
    expect(first[header.indexOf('failed:opted_out')]).to.equal('0');
    expect(first).to.have.length(header.length);
    expect(lines[2]!.split(',').slice(0, 2)).to.deep.equal(['acme', '2026-11-28']);
  });
});
