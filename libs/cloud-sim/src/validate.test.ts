import { expect } from 'chai';
import { GraphError } from './errors.js';
import { CALLBACK_DATA_MAX, TEXT_MAX, toWaId, validateSend } from './validate.js';

const refusal = (body: unknown): GraphError => {
  try {
    validateSend(body);
  } catch (err) {
    expect(err).to.be.instanceOf(GraphError);
    return err as GraphError;
  }
  throw new Error('expected a refusal');
};
const base = { messaging_product: 'whatsapp', to: '+1 555-010-2000' };

describe('cloud-sim: send request validation', () => {
  it('When a text message is complete, then it is read with its WhatsApp id and preview flag', () => {
    const request = validateSend({ ...base, type: 'text', text: { body: 'hi', preview_url: true } });
    expect(request).to.include({ waId: '15550102000', type: 'text' });
    expect(request.text).to.deep.equal({ body: 'hi', preview_url: true });
  });

  it('When biz_opaque_callback_data is a string of at most 512 characters, then it is kept; else error 100 names it', () => {
    const text = { ...base, text: { body: 'hi' } };
    const longest = 'é'.repeat(CALLBACK_DATA_MAX);
    expect(validateSend({ ...text, biz_opaque_callback_data: longest }).callbackData).to.equal(longest);
    expect(validateSend(text)).not.to.have.property('callbackData');
    for (const wrong of ['x'.repeat(CALLBACK_DATA_MAX + 1), 42, { a: 1 }]) {
      const error = refusal({ ...text, biz_opaque_callback_data: wrong });
      expect(error.code).to.equal(100);
      expect(error.details).to.include('biz_opaque_callback_data');
    }
  });

  it('When type is omitted, then the message is text (the reference default)', () => {
    expect(validateSend({ ...base, text: { body: 'hi' } }).type).to.equal('text');
  });

  it('When a required field is missing, then error 100 names it', () => {
    for (const [body, field] of [
      [{ to: '15550102000', text: { body: 'x' } }, 'messaging_product'],
      [{ messaging_product: 'whatsapp', text: { body: 'x' } }, 'to'],
      [{ ...base, type: 'text' }, 'text'],
      [{ ...base, type: 'text', text: {} }, "text['body']"],
      [{ ...base, type: 'image', image: {} }, "exactly one of 'id' or 'link'"],
      [{ ...base, type: 'template', template: { name: 'x' } }, "template['language']"],
      [{ ...base, type: 'template', template: { name: 'x', language: {} } }, "template['language']['code']"],
      [{ ...base, type: 'reaction', reaction: { emoji: '👍' } }, "reaction['message_id']"],
      [{ ...base, type: 'location', location: { latitude: 1 } }, "location['longitude']"],
      [{ ...base, type: 'contacts', contacts: [{ name: {} }] }, "contacts[0]['name']['formatted_name']"],
      [{ ...base, text: { body: 'x' }, context: {} }, "context['message_id']"],
    ] as const) {
      const err = refusal(body);
      expect(err.code, JSON.stringify(body)).to.equal(100);
      expect(err.details).to.include(field);
    }
  });

  it('When a value is wrong, then error 100 says what is wrong with it', () => {
    expect(refusal({ ...base, messaging_product: 'sms', text: { body: 'x' } }).details).to.include(
      'messaging_product',
    );
    expect(refusal({ ...base, type: 'poll' }).details).to.include('type');
    expect(refusal({ ...base, to: 'abc', text: { body: 'x' } }).details).to.include('to');
    expect(refusal({ ...base, text: { body: 'x'.repeat(TEXT_MAX + 1) } }).details).to.include('too long');
    expect(refusal({ ...base, text: { body: 'x', preview_url: 'yes' } }).details).to.include('preview_url');
    expect(refusal({ ...base, type: 'image', image: { link: 'ftp://x/y.png' } }).details).to.include('http');
    expect(
      refusal({ ...base, type: 'image', image: { id: '1', link: 'https://x/y.png' } }).details,
    ).to.include('exactly one');
    expect(refusal({ ...base, type: 'audio', audio: { id: '1', caption: 'c' } }).details).to.include(
      'caption',
    );
    expect(
      refusal({ ...base, type: 'location', location: { latitude: 91, longitude: 0 } }).details,
    ).to.include('latitude');
    expect(refusal([]).details).to.include('JSON object');
  });

  it('When text holds a lone surrogate, then it is refused as invalid Unicode; a paired one passes', () => {
    expect(refusal({ ...base, text: { body: 'a\uD800b' } }).details).to.include('not valid Unicode');
    expect(validateSend({ ...base, text: { body: '😀' } }).text!.body).to.equal('😀');
  });

  it('When a 4096-character text is made of emoji, then it is counted in characters, not UTF-16 units', () => {
    expect(() => validateSend({ ...base, text: { body: '😀'.repeat(TEXT_MAX) } })).not.to.throw();
  });

  it('When media, template, reply and the other kinds are complete, then they pass', () => {
    const media = validateSend({
      ...base,
      type: 'document',
      document: { id: '9', filename: 'a.pdf', caption: 'c' },
    });
    expect(media.media).to.deep.equal({ id: '9', filename: 'a.pdf', caption: 'c' });
    const template = validateSend({
      ...base,
      type: 'template',
      template: { name: 'otp', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [] }] },
      context: { message_id: 'wamid.x' },
    });
    expect(template.template!.language.code).to.equal('en_US');
    expect(template.replyTo).to.equal('wamid.x');
    validateSend({ ...base, type: 'reaction', reaction: { message_id: 'wamid.x', emoji: '' } });
    validateSend({ ...base, type: 'location', location: { latitude: '52.5', longitude: 13.4, name: 'B' } });
    validateSend({ ...base, type: 'contacts', contacts: [{ name: { formatted_name: 'A B' } }] });
  });

  it('When a phone number is read, then its digits are the WhatsApp id, within 7 to 15 digits', () => {
    expect(toWaId('+49 (30) 1234-5678')).to.equal('493012345678');
    expect(toWaId('123')).to.equal(undefined);
    expect(toWaId('1'.repeat(16))).to.equal(undefined);
    expect(toWaId('12345678x')).to.equal(undefined);
  });
});
