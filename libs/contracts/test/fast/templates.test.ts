import { expect } from 'chai';
import {
  TEMPLATE_LIMITS,
  kindFieldsOf,
  messageKindOf,
  otpTemplateComponents,
  sendBodySchema,
  validate,
  type SendBody,
} from '@mgw/contracts';

const schema = sendBodySchema(100);
const check = (template: unknown, extra: Record<string, unknown> = {}) =>
  validate<SendBody>(schema, { to: '15551234567', template, ...extra }, { to: 100 });
/** The messages of a refused body (it must be refused). */
const problems = (template: unknown, extra: Record<string, unknown> = {}): string[] => {
  const { details } = check(template, extra);
  expect(details, JSON.stringify(template)).to.be.an('array');
  return details!.map((d) => d.message);
};
const body = (...parameters: unknown[]) => ({ type: 'body', parameters });
const text = (value: string) => ({ type: 'text', text: value });

describe('template messages: the /send field', () => {
  it("When a template is given in Meta's shape (body, header media, buttons, currency, date), then it passes as given, its button index a number", () => {
    const template = {
      name: 'order_update_2',
      language: 'pt_BR',
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/a.png' } }] },
        body(
          text('Ana 👩🏽‍💻 مرحبا'),
          { type: 'currency', currency: { fallback_value: '$10.99', code: 'USD', amount_1000: 10990 } },
          { type: 'date_time', date_time: { fallback_value: 'February 25, 1977' } },
        ),
        {
          type: 'button',
          sub_type: 'quick_reply',
          index: 0,
          parameters: [{ type: 'payload', payload: 'yes' }],
        },
        { type: 'button', sub_type: 'url', index: '1', parameters: [text('track/123')] },
        {
          type: 'button',
          sub_type: 'copy_code',
          index: 2,
          parameters: [{ type: 'coupon_code', coupon_code: 'SAVE25' }],
        },
      ],
    };
    const { value, details } = check(template);
    expect(details).to.equal(undefined);
    expect(value!.template!.components![3]).to.deep.equal({
      type: 'button',
      sub_type: 'url',
      index: 1,
      parameters: [text('track/123')],
    });
    expect(messageKindOf(value!)).to.equal('template');
    expect(check({ name: 'hello_world', language: 'en' }).details).to.equal(undefined);
  });

  it('When the name or language is not one Meta takes, then 400 names the field and its rule', () => {
    for (const [name, language] of [
      ['Hello', 'en'],
      ['hello world', 'en'],
      ['', 'en'],
      ['a'.repeat(513), 'en'],
      ['hello', 'english'],
      ['hello', 'en-US'],
      ['hello', 'EN'],
      ['hello', 'en_us'],
      ['hello\u0000', 'en'],
    ]) {
      const found = problems({ name, language });
      expect(found.join(' '), `${name} ${language}`).to.match(/template\.(name|language)/);
    }
  });

  it('When the template comes with text, an attachment, another kind, mentions or linkPreview, then 400: one content kind per message', () => {
    const t = { name: 'hello', language: 'en' };
    for (const extra of [
      { text: 'hi' },
      { attachment: { type: 'image', url: 'https://example.com/a.png' } },
      { poll: { question: 'q', options: ['a', 'b'] } },
      { location: { latitude: 1, longitude: 2 } },
      { mentions: ['15550001111'] },
      { linkPreview: false },
    ])
      expect(problems(t, extra).join(' '), JSON.stringify(extra)).to.include('template');
    // A reply to a message of the chat stays possible.
    expect(check(t, { existingMessageId: 'abc' }).details).to.equal(undefined);
  });

  it('When a component breaks its own rules (a button without index, a header with two parameters, a parameter of the wrong type), then 400 names the component', () => {
    expect(
      problems({ name: 'x', language: 'en', components: [{ type: 'button', parameters: [] }] })[0],
    ).to.equal('template.components[0] is a button: it needs sub_type and index');
    expect(
      problems({ name: 'x', language: 'en', components: [{ type: 'body', index: 0, parameters: [] }] })[0],
    ).to.equal('template.components[0] takes sub_type and index only for a button');
    expect(
      problems({
        name: 'x',
        language: 'en',
        components: [{ type: 'header', parameters: [text('a'), text('b')] }],
      })[0],
    ).to.equal('template.components[0] is a header: it takes at most one parameter');
    expect(
      problems({
        name: 'x',
        language: 'en',
        components: [
          { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'payload', payload: 'p' }] },
        ],
      })[0],
    ).to.equal('template.components[0] cannot take a payload parameter (a url button takes text)');
    expect(
      problems({ name: 'x', language: 'en', components: [{ type: 'footer', parameters: [text('a')] }] })[0],
    ).to.equal('template.components[0] cannot take a text parameter (a footer takes none)');
    expect(
      problems({
        name: 'x',
        language: 'en',
        components: [{ type: 'header', parameters: [text('h'.repeat(61))] }],
      })[0],
    ).to.equal('template.components[0] is a header: its text may be at most 60 characters');
    expect(
      problems({
        name: 'x',
        language: 'en',
        components: [
          { type: 'button', sub_type: 'url', index: 0, parameters: [text('a')] },
          { type: 'button', sub_type: 'quick_reply', index: 0, parameters: [] },
        ],
      })[0],
    ).to.equal('template.components has two buttons of index 0');
    expect(problems({ name: 'x', language: 'en', components: [body(), body()] })[0]).to.equal(
      'template.components has two body components',
    );
  });

  it("When a parameter holds what Meta refuses (line breaks, tabs, 5 spaces, controls, a lone surrogate, a field of another type), then 400 names the parameter's field", () => {
    const of = (p: unknown) => problems({ name: 'x', language: 'en', components: [body(p)] });
    expect(of(text('a\nb'))[0]).to.match(/parameters\[0\]\.text must not contain line breaks/);
    expect(of(text('a\tb'))[0]).to.match(/parameters\[0\]\.text must not contain line breaks/);
    expect(of(text('a\u0085b'))[0]).to.match(/parameters\[0\]\.text must not contain line breaks/);
    expect(of(text('a     b'))[0]).to.match(/more than 4 spaces in a row/);
    expect(of(text('\ud800x'))[0]).to.match(/lone surrogate/);
    expect(of(text(''))[0]).to.match(/parameters\[0\]\.text is not allowed to be empty/);
    // A field of another type: named with the one its type holds.
    expect(of({ type: 'text', text: 'a', payload: 'b' })[0]).to.match(
      /parameters\[0\] is of type text: it must hold text and no other value \(text, payload given\)/,
    );
    expect(of({ type: 'text' })[0]).to.match(
      /parameters\[0\] is of type text: it must hold text and no other value \(none given\)/,
    );
    expect(of({ type: 'location' })[0]).to.match(/parameters\[0\]\.type must be one of/);
    expect(
      of({ type: 'currency', currency: { fallback_value: 'x', code: 'usd', amount_1000: 1 } })[0],
    ).to.match(/ISO 4217/);
    expect(
      of({ type: 'currency', currency: { fallback_value: 'x', code: 'USD', amount_1000: 1.5 } })[0],
    ).to.match(/amount_1000 must be an integer/);
    expect(check({ name: 'x', language: 'en', components: [body(text('a    b'))] }).details).to.equal(
      undefined,
    );
  });

  it('When a media parameter names no file, both an id and a link, or a link that is not http(s), then 400', () => {
    const header = (image: unknown) => ({
      name: 'x',
      language: 'en',
      components: [{ type: 'header', parameters: [{ type: 'image', image }] }],
    });
    expect(problems(header({}))[0]).to.match(/must have either id or link/);
    expect(problems(header({ id: '1', link: 'https://example.com/a' }))[0]).to.match(
      /only one of id or link/,
    );
    expect(problems(header({ link: 'file:///etc/passwd' }))[0]).to.match(/valid uri/);
    expect(problems(header({ id: '../1' }))[0]).to.match(/image\.id/);
    const doc = (filename: string) => ({
      name: 'x',
      language: 'en',
      components: [{ type: 'header', parameters: [{ type: 'document', document: { id: '1', filename } }] }],
    });
    expect(problems(doc('a\u202Eb.pdf'))[0]).to.match(/document\.filename/);
    expect(check(doc('invoice.pdf')).details).to.equal(undefined);
    // TEMPLATE_LIMITS.filename, lower than any file name's 255: fileName() must not lift it.
    expect(check(doc(`${'a'.repeat(TEMPLATE_LIMITS.filename - 4)}.pdf`)).details).to.equal(undefined);
    expect(problems(doc(`${'a'.repeat(TEMPLATE_LIMITS.filename - 3)}.pdf`))[0]).to.match(
      /document\.filename/,
    );
  });

  it('When a template is over its bounds (components, parameters, a text, a coupon code), then 400 and nothing is judged unbounded', () => {
    const many = Array.from({ length: TEMPLATE_LIMITS.components + 1 }, (_, i) => ({
      type: 'button',
      sub_type: 'quick_reply',
      index: i % 10,
      parameters: [],
    }));
    expect(problems({ name: 'x', language: 'en', components: many })[0]).to.match(
      /must contain less than or equal to 10/,
    );
    const params = Array.from({ length: TEMPLATE_LIMITS.parametersPerComponent + 1 }, () => text('a'));
    expect(problems({ name: 'x', language: 'en', components: [body(...params)] })[0]).to.match(
      /less than or equal to 20/,
    );
    expect(problems({ name: 'x', language: 'en', components: [body(text('a'.repeat(1025)))] })[0]).to.match(
      /length must be less than or equal to 1024/,
    );
    const coupon = {
      type: 'button',
      sub_type: 'copy_code',
      index: 0,
      parameters: [{ type: 'coupon_code', coupon_code: 'C'.repeat(16) }],
    };
    expect(problems({ name: 'x', language: 'en', components: [coupon] })[0]).to.match(/coupon_code/);
    for (const hostile of [
      null,
      'x',
      1,
      [],
      { name: 'x' },
      { language: 'en' },
      { name: 'x', language: 'en', components: {} },
    ])
      expect(check(hostile).details, JSON.stringify(hostile)).to.be.an('array');
  });

  it("When an OTP's template is kept on its record, then only its name and language are: the code stays in the content", () => {
    const template = {
      name: 'verification_code',
      language: 'en_US',
      components: otpTemplateComponents('123456'),
    };
    expect(kindFieldsOf({ template, otp: { language: 'English' } })).to.deep.equal({
      template: { name: 'verification_code', language: 'en_US' },
    });
    expect(kindFieldsOf({ template })).to.deep.equal({ template });
    expect(otpTemplateComponents('0042')).to.deep.equal([
      { type: 'body', parameters: [{ type: 'text', text: '0042' }] },
      { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: '0042' }] },
    ]);
  });
});
