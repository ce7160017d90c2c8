import { expect } from 'chai';
import {
  BROKER_SETTING_HISTORY,
  brokerSettingAt,
  brokerWantsAt,
  compareLogIds,
  type BrokerSettingHistory,
} from '../../src/index.js';

describe('contracts: a device’s broker setting in force when an event was logged (brokers.ts)', () => {
  it('When log ids are compared, then the ms part counts first and the sequence after it, as numbers (not as text)', () => {
    expect(compareLogIds('1700000000000-0', '1700000000000-0')).to.equal(0);
    expect(compareLogIds('1700000000000-1', '1700000000000-0')).to.equal(1);
    expect(compareLogIds('1700000000000-9', '1700000000000-10')).to.equal(-1);
    expect(compareLogIds('999-99', '1000-0')).to.equal(-1);
    expect(compareLogIds('1700000000001-0', '1700000000000-99999')).to.equal(1);
    expect(compareLogIds('0-0', '1-0')).to.equal(-1);
    // Beyond 2^53: exact all the same.
    expect(compareLogIds('5-18446744073709551615', '5-18446744073709551614')).to.equal(1);
  });

  it('When a setting has no boundary (never changed, or stored by the previous release), then it governs every event', () => {
    const h: BrokerSettingHistory = { current: { enabled: true, events: ['message.read'] }, past: [] };
    expect(brokerSettingAt(h, '1-0')).to.deep.equal({ enabled: true, events: ['message.read'] });
    expect(brokerWantsAt(h, '1-0', 'message.read')).to.equal(true);
    expect(brokerWantsAt(h, '1-0', 'message.sent')).to.equal(false);
  });

  it('When a setting changed at a log id, then an event logged up to it is judged by the setting before, one logged after by the new one', () => {
    // Off (the SQS default) until 100-2; on for every event after.
    const h: BrokerSettingHistory = {
      current: { enabled: true },
      after: '100-2',
      past: [{ setting: { enabled: false } }],
    };
    expect(brokerWantsAt(h, '99-5', 'message.sent')).to.equal(false);
    expect(brokerWantsAt(h, '100-1', 'message.sent')).to.equal(false);
    expect(brokerWantsAt(h, '100-2', 'message.sent')).to.equal(false); // the last before the change
    expect(brokerWantsAt(h, '100-3', 'message.sent')).to.equal(true);
    expect(brokerWantsAt(h, '101-0', 'message.sent')).to.equal(true);
  });

  it('When a setting changed several times, then each event is judged by the one in force at its id, and one older than the oldest boundary kept is not wanted', () => {
    // [.., 10-0]: only message.read; (10-0, 20-0]: off; (20-0, 30-0]: only message.sent; after: all.
    const h: BrokerSettingHistory = {
      current: { enabled: true },
      after: '30-0',
      past: [
        { setting: { enabled: true, events: ['message.sent'] }, after: '20-0' },
        { setting: { enabled: false }, after: '10-0' },
        { setting: { enabled: true, events: ['message.read'] } },
      ],
    };
    const wants = (id: string) =>
      (['message.sent', 'message.read'] as const).filter((t) => brokerWantsAt(h, id, t));
    expect(wants('5-0')).to.deep.equal(['message.read']);
    expect(wants('10-0')).to.deep.equal(['message.read']);
    expect(wants('10-1')).to.deep.equal([]);
    expect(wants('20-0')).to.deep.equal([]);
    expect(wants('20-1')).to.deep.equal(['message.sent']);
    expect(wants('30-0')).to.deep.equal(['message.sent']);
    expect(wants('30-1')).to.deep.equal(['message.sent', 'message.read']);

    // The oldest era dropped (the history's bound): what came before 10-0 is not known, so not wanted.
    const cut: BrokerSettingHistory = { ...h, past: h.past.slice(0, 2) };
    expect(brokerSettingAt(cut, '5-0')).to.equal(undefined);
    expect(brokerWantsAt(cut, '10-0', 'message.read')).to.equal(false);
    expect(brokerWantsAt(cut, '25-0', 'message.sent')).to.equal(true);
    expect(BROKER_SETTING_HISTORY).to.equal(16);
  });
});
