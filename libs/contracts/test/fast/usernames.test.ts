import { expect } from 'chai';
import {
  USERNAME_RULES,
  checkUsername,
  isUsernamePin,
  sendBodySchema,
  usernameOfAddress,
  usernameResolveBodySchema,
  validate,
  validateSendBody,
  type UsernameRule,
} from '../../src/index.js';

/** Usernames WhatsApp takes, and what they are asked and remembered as. */
const GOOD: [string, string][] = [
  ['alice.shop', 'alice.shop'],
  ['@alice.shop', 'alice.shop'],
  ['Alice.Shop', 'alice.shop'],
  ['@BOB_99', 'bob_99'],
  ['a1b', 'a1b'],
  ['_x_', '_x_'],
  ['9lives', '9lives'],
  ['a'.repeat(35), 'a'.repeat(35)],
  ['shop.co', 'shop.co'], // not one of WhatsApp's domain endings
  ['my.www.shop', 'my.www.shop'], // "www." only refused at the start
  ['whats_app', 'whats_app'],
];

/** Usernames each of WhatsApp's rules refuses, with the rule. */
const BAD: [string, UsernameRule][] = [
  ['alice shop', 'invalid_character'],
  ['alice-shop', 'invalid_character'],
  ['alice@shop', 'invalid_character'],
  ['@@alice', 'invalid_character'],
  ['ålice', 'invalid_character'],
  ['alice\u200b', 'invalid_character'],
  ['\ud83d\ude00abc', 'invalid_character'],
  ['\ud800abc', 'invalid_character'],
  ['', 'invalid_length'],
  ['@', 'invalid_length'],
  ['ab', 'invalid_length'],
  ['a'.repeat(36), 'invalid_length'],
  ['12345', 'no_letter'],
  ['1_2.3', 'no_letter'],
  ['.alice', 'invalid_periods'],
  ['alice.', 'invalid_periods'],
  ['ali..ce', 'invalid_periods'],
  ['www.alice', 'www_prefix'],
  ['WWW.alice', 'www_prefix'],
  ['alice.com', 'domain_suffix'],
  ['alice.NET', 'domain_suffix'],
  ['alice.html', 'domain_suffix'],
  ['alice.xml', 'domain_suffix'],
  ['mywhatsapp', 'reserved_word'],
  ['Instagram.fan', 'reserved_word'],
  ['facebook1', 'reserved_word'],
  ['oculus_vr', 'reserved_word'],
];

describe('contracts: WhatsApp usernames (usernames.ts)', () => {
  it('When a username follows WhatsApp’s rules, then it is taken, without its "@" and in lower case', () => {
    for (const [input, username] of GOOD)
      expect(checkUsername(input), input).to.deep.equal({ ok: true, username });
  });

  it('When a username breaks a rule, then the answer names the first rule it breaks, in WhatsApp Web’s order', () => {
    for (const [input, rule] of BAD) {
      const checked = checkUsername(input);
      expect(checked.ok, input).to.equal(false);
      expect((checked as { rule: UsernameRule }).rule, JSON.stringify(input)).to.equal(rule);
    }
    // A username breaking several rules: the order decides (too short before no letter, …).
    expect(checkUsername('1.')).to.include({ rule: 'invalid_length' });
    expect(checkUsername('.123')).to.include({ rule: 'no_letter' });
    expect(checkUsername('www.x.com')).to.include({ rule: 'www_prefix' });
    expect(new Set(BAD.map(([, r]) => r))).to.deep.equal(new Set(USERNAME_RULES));
  });

  it('When a PIN is checked, then only exactly 4 digits are a username key', () => {
    for (const pin of ['0000', '1234', '9876']) expect(isUsernamePin(pin), pin).to.equal(true);
    for (const pin of ['123', '12345', '12a4', ' 1234', '١٢٣٤', 'ABC123', ''])
      expect(isUsernamePin(pin), pin).to.equal(false);
  });

  it('When a `to` names a username, then usernameOfAddress gives it only for a valid `@name`', () => {
    expect(usernameOfAddress('@Alice.Shop')).to.equal('alice.shop');
    expect(usernameOfAddress('alice.shop')).to.equal(undefined);
    expect(usernameOfAddress('@a')).to.equal(undefined);
    expect(usernameOfAddress('15551234567')).to.equal(undefined);
  });

  it('When POST /contacts/username’s body is validated, then the username is normalised and a bad one or a bad PIN says which rule', () => {
    expect(validate(usernameResolveBodySchema, { username: '@Alice.Shop', pin: '0420' }).value).to.deep.equal(
      {
        username: 'alice.shop',
        pin: '0420',
      },
    );
    expect(validate(usernameResolveBodySchema, { username: 'alice..shop' }).details).to.deep.equal([
      {
        path: ['username'],
        message:
          'username is not a WhatsApp username: it may not start or end with a period nor hold two in a row (rule: invalid_periods)',
      },
    ]);
    expect(validate(usernameResolveBodySchema, { username: 'x'.repeat(500) }).details?.[0]?.message).to.match(
      /\(rule: invalid_length\)$/,
    );
    expect(validate(usernameResolveBodySchema, { username: '' }).details?.[0]?.message).to.match(
      /\(rule: invalid_length\)$/,
    );
    expect(validate(usernameResolveBodySchema, { username: 'alice', pin: '12345' }).details).to.deep.equal([
      { path: ['pin'], message: 'pin must be the username key: exactly 4 digits' },
    ]);
    expect(validate(usernameResolveBodySchema, { username: 42 }).details?.[0]?.path).to.deep.equal([
      'username',
    ]);
    expect(validate(usernameResolveBodySchema, {}).details?.[0]?.path).to.deep.equal(['username']);
    expect(
      validate(usernameResolveBodySchema, { username: 'alice', other: 1 }).details?.[0]?.path,
    ).to.deep.equal(['other']);
  });

  it('When /send names a username in `to`, alone or in a list, then it is kept as `@name` in lower case, and a bad one says which rule', () => {
    const schema = sendBodySchema(10);
    expect(validateSendBody(schema, { to: '@Alice.Shop', text: 'hi' }, 10).value?.to).to.equal('@alice.shop');
    expect(
      validateSendBody(schema, { to: ['15551234567', '@bob_99', '12345@lid'], text: 'hi' }, 10).value?.to,
    ).to.deep.equal(['15551234567', '@bob_99', '12345@lid']);
    expect(validateSendBody(schema, { to: '@www.alice', text: 'hi' }, 10).details).to.deep.equal([
      {
        path: ['to'],
        message: 'to is not a WhatsApp username: it may not start with www. (rule: www_prefix)',
      },
    ]);
    expect(
      validateSendBody(schema, { to: ['15551234567', '@ab'], text: 'hi' }, 10).details?.[0],
    ).to.deep.equal({
      path: ['to', 1],
      message: 'to[1] is not a WhatsApp username: it must be 3 to 35 characters long (rule: invalid_length)',
    });
    // The same username twice, in any case, is the same recipient twice.
    expect(
      validateSendBody(schema, { to: ['@alice', '@ALICE'], text: 'hi' }, 10).details?.[0]?.message,
    ).to.equal('to lists the same phone number twice');
    // What is no username still gets the rule of numbers and LIDs.
    expect(validateSendBody(schema, { to: 'alice', text: 'hi' }, 10).details?.[0]?.message).to.match(
      /^to must be a phone number in international format/,
    );
  });
});
