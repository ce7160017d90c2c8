import { expect } from 'chai';
import { ago, idKind, initials, nameOf, ownEntry, phone } from './format';

describe('console: how the pages write times, numbers and ids (kit/format.ts)', () => {
  const now = Date.parse('2026-11-30T12:00:00Z');
  const before = (seconds: number) => new Date(now - seconds * 1000).toISOString();

  it('When a time is past, then it reads as people say it: just now, minutes, hours, days', () => {
    expect(ago(before(10), now)).to.equal('just now');
    expect(ago(before(44), now)).to.equal('just now');
    expect(ago(before(45), now)).to.equal('1 min ago');
    expect(ago(before(59 * 60), now)).to.equal('59 min ago');
    expect(ago(before(3600), now)).to.equal('1 h ago');
    expect(ago(before(86_400 * 3), now)).to.equal('3 d ago');
  });

  it('When a time is ahead (a retry, a pause that ends), then it reads "in …", never "0 min"', () => {
    expect(ago(before(-5), now)).to.equal('in 1 min');
    expect(ago(before(-90 * 60), now)).to.equal('in 2 h');
    expect(ago(before(-86_400 * 2), now)).to.equal('in 2 d');
  });

  it('When there is no time, or it is not a date, then a dash stands for it', () => {
    expect(ago(undefined, now)).to.equal('—');
    expect(ago('not a date', now)).to.equal('—');
  });

  it('When a number is shown, then it gets its "+"; a LID, a group or anything else keeps its own spelling', () => {
    expect(phone('15551234567')).to.equal('+15551234567');
    expect(phone('15551234567@s.whatsapp.net')).to.equal('+15551234567');
    expect(phone('123456789@lid')).to.equal('123456789@lid');
    expect(phone('1203630@g.us')).to.equal('1203630@g.us');
    expect(phone('+1555')).to.equal('+1555');
    expect(phone(undefined)).to.equal('');
  });

  it('When an id is named, then its kind decides: the status broadcast, a channel, a group, a LID, a number', () => {
    expect(idKind('status@broadcast')).to.equal('status');
    expect(idKind('1203@newsletter')).to.equal('channel');
    expect(idKind('1203@g.us')).to.equal('group');
    expect(idKind('98765@lid')).to.equal('lid');
    expect(idKind('15551234567')).to.equal('phone');
    expect(nameOf('status@broadcast')).to.deep.equal({
      kind: 'status',
      name: 'Status',
      title: 'status@broadcast',
    });
    expect(nameOf('1203@g.us', { name: 'Shop team' })).to.deep.equal({
      kind: 'group',
      tag: 'Group',
      name: 'Shop team',
      title: '1203@g.us',
    });
    expect(nameOf('1203@newsletter')).to.include({ tag: 'Channel', name: '1203@newsletter' });
    expect(nameOf('98765@lid', { phone: '15550001111' })).to.deep.equal({
      kind: 'lid',
      name: '+15550001111',
      title: '98765@lid',
    });
    expect(nameOf('98765@lid').name).to.equal('98765@lid');
    expect(nameOf('15551234567')).to.deep.equal({ kind: 'phone', name: '+15551234567' });
  });

  it('When initials are drawn, then two words give two letters, one word its first two, none a "?"', () => {
    expect(initials('Shop one', 'x')).to.equal('SO');
    expect(initials('shop_two-x', 'x')).to.equal('ST');
    expect(initials('alice', 'x')).to.equal('AL');
    expect(initials(undefined, 'device-7')).to.equal('D7');
    expect(initials('   ', 'x')).to.equal('?');
  });

  it("When a table is read with a key the gateway sent, then only the table's own entries answer, never an inherited one", () => {
    const words = { daily_cap: 'the daily cap' };
    expect(ownEntry(words, 'daily_cap')).to.equal('the daily cap');
    for (const key of ['constructor', 'toString', '__proto__', 'valueOf', 'unknown', undefined])
      expect(ownEntry(words, key), String(key)).to.equal(undefined);
  });
});
