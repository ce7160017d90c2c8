import { expect } from 'chai';
import { bytes, limitText, quotaText, quotasOf } from './workspace-quotas';

const typed = (
  t: Partial<Record<'devices' | 'messagesPerDay' | 'queuedMessages' | 'mediaBytes', string>>,
) => ({
  devices: '',
  messagesPerDay: '',
  queuedMessages: '',
  mediaBytes: '',
  ...t,
});

describe("console: a workspace's quotas as typed and shown (workspaces/workspace-quotas.tsx)", () => {
  it('When quotas are shown in the form, then media is in MB and an absent quota is an empty field', () => {
    expect(quotaText({ devices: 3, mediaBytes: 20_000_000 })).to.deep.equal(
      typed({ devices: '3', mediaBytes: '20' }),
    );
  });

  it('When a new workspace’s quotas are typed, then each filled field is a number (media in bytes) and an empty one is left out', () => {
    expect(quotasOf(typed({ devices: ' 5 ', mediaBytes: '1.5' }), 'absent')).to.deep.equal({
      quotas: { devices: 5, mediaBytes: 1_500_000 },
      invalid: [],
    });
  });

  it('When an edit empties a field, then that quota is sent as null: no limit any more', () => {
    expect(quotasOf(typed({ devices: '2' }), 'null').quotas).to.deep.equal({
      devices: 2,
      messagesPerDay: null,
      queuedMessages: null,
      mediaBytes: null,
    });
  });

  it('When a field is no whole number (a fraction, negative, words, Infinity, negative media), then it is named and not sent; media is rounded to whole bytes', () => {
    const { quotas, invalid } = quotasOf(
      typed({ devices: '1.5', messagesPerDay: '-1', queuedMessages: 'lots', mediaBytes: '-0.5' }),
      'absent',
    );
    expect(invalid).to.deep.equal(['devices', 'messagesPerDay', 'queuedMessages', 'mediaBytes']);
    expect(quotas).to.deep.equal({});
    expect(quotasOf(typed({ devices: 'Infinity' }), 'absent').invalid).to.deep.equal(['devices']);
    expect(quotasOf(typed({ mediaBytes: '1.2345678' }), 'absent').quotas).to.deep.equal({
      mediaBytes: 1_234_568,
    });
  });

  it('When limits are read, then counts get thousands separators, media its unit, an absent one "no limit"', () => {
    expect(limitText('messagesPerDay', { messagesPerDay: 5000 })).to.equal('5,000');
    expect(limitText('mediaBytes', { mediaBytes: 20_000_000 })).to.equal('20.0 MB');
    expect(limitText('devices', {})).to.equal('no limit');
    expect([999, 1000, 999_999, 1_000_000, 2_500_000_000].map(bytes)).to.deep.equal([
      '999 B',
      '1.0 kB',
      '1000.0 kB',
      '1.0 MB',
      '2.50 GB',
    ]);
  });
});
