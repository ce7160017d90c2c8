import { expect } from 'chai';
import type { Schema } from 'joi';
import {
  Joi,
  FILE_NAME_MAX_BYTES,
  channelCreateBodySchema,
  contradictedMediaKind,
  groupCreateBodySchema,
  hasLoneSurrogate,
  labelCreateBodySchema,
  mediaUploadQuerySchema,
  profileBodySchema,
  refusedNameCharacter,
  safeFileName,
  sendBodySchema,
  validate,
  validateSendBody,
} from '../../src/index.js';

/** Names people write, in scripts and with emoji, that every name rule must keep. */
const GOOD_NAMES = [
  'Ann Smith',
  'مريم العلي', // Arabic (RTL)
  'שרה כהן', // Hebrew (RTL)
  'می‌خواهم', // Persian with ZWNJ (U+200C)
  'क्‍ष', // Devanagari with ZWJ (U+200D)
  '👨‍👩‍👧‍👦 family', // a ZWJ emoji sequence
  '🇩🇪 Team', // a flag: a surrogate pair of pairs
  '中文名字',
  'Zoë & Chloé',
];

describe('contracts: text that is valid Unicode, names that are what they look like (text.ts)', () => {
  it('When a string has an unpaired high or low surrogate, then hasLoneSurrogate says so; pairs and plain text pass', () => {
    for (const bad of [
      '\ud800',
      'a\udbffb',
      '\udc00x',
      'x\udfff',
      '😀'.slice(0, 1),
      '😀'.slice(1),
      '\udc00\ud800',
    ])
      expect(hasLoneSurrogate(bad), JSON.stringify(bad)).to.equal(true);
    for (const good of ['', 'abc', '😀', '\ud83d\ude00', ...GOOD_NAMES])
      expect(hasLoneSurrogate(good), good).to.equal(false);
  });

  it('When any string of any schema has a lone surrogate, then it is refused naming the field, before its own rules', () => {
    const schema = Joi.object({
      text: Joi.string(),
      kind: Joi.string().valid('a'),
      code: Joi.string().pattern(/^\d+$/),
    });
    const r = validate(schema, { text: 'hi \ud800' });
    expect(r.details).to.deep.equal([
      {
        path: ['text'],
        message:
          'text must be valid Unicode text: it has a lone surrogate (half of a UTF-16 pair, no character)',
      },
    ]);
    // The pattern's message would repeat the value: the surrogate comes first and alone.
    expect(validate(schema, { code: '\udc00' }).details).to.have.length(1);
    expect(validate(schema, { code: '\udc00' }).details?.[0]?.message).to.match(/lone surrogate/);
  });

  it('When message text has line breaks, tabs, emoji, ZWJ sequences, RTL text and its marks, then it is kept; a lone surrogate is refused', () => {
    const send = sendBodySchema(10);
    const text = 'Hello\n\tمرحبا \u200fשלום\u200e 👨‍👩‍👧 \u202bembedded\u202c';
    expect(validateSendBody(send, { to: '15551234567', text }, 10).value).to.deep.equal({
      to: '15551234567',
      text,
    });
    // The fast path (a plain text send) and the list path (one entry judged by joi) refuse it too.
    for (const body of [
      { to: '15551234567', text: 'hi \ud800' },
      { to: ['15551234567', '15551234568'], text: 'hi \ud800' },
      { to: '15551234567', text: 'hi', existingMessageId: 'a\udc00' },
      {
        to: [{ phone: '15551234567' }, { phone: '15551234568', vars: { name: 'x\ud800' } }],
        text: 'hi {{name}}',
      },
    ]) {
      const r = validateSendBody(send, body, 10);
      expect(r.details, JSON.stringify(body)).to.have.length.above(0);
      expect(r.details?.[0]?.message).to.match(/lone surrogate/);
    }
  });

  it('When a field name has a lone surrogate, then the body is refused without repeating it', () => {
    const r = validate(sendBodySchema(10), { to: '15551234567', text: 'hi', 'x\ud800': 1 });
    expect(r.details).to.deep.equal([{ path: [], message: 'a field name must be valid Unicode text' }]);
  });

  it('When a name has a control, bidi or invisible character, then refusedNameCharacter names it; ZWNJ, ZWJ and RTL text pass', () => {
    const refused: [string, string][] = [
      ['a\u0000b', 'U+0000'],
      ['a\nb', 'U+000A'],
      ['a\tb', 'U+0009'],
      ['a\u001bb', 'U+001B'],
      ['a\u007fb', 'U+007F'],
      ['a\u0085b', 'U+0085'],
      ['a\u009fb', 'U+009F'],
      ['\u202eevil', 'U+202E'],
      ['a\u202ab', 'U+202A'],
      ['a\u2066b', 'U+2066'],
      ['a\u2069b', 'U+2069'],
      ['a\u200eb', 'U+200E'],
      ['a\u200fb', 'U+200F'],
      ['a\u061cb', 'U+061C'],
      ['a\u200bb', 'U+200B'],
      ['a\u2060b', 'U+2060'],
      ['\ufeffa', 'U+FEFF'],
      ['a\u2028b', 'U+2028'],
    ];
    for (const [name, code] of refused)
      expect(refusedNameCharacter(name), JSON.stringify(name)).to.equal(code);
    for (const name of GOOD_NAMES) expect(refusedNameCharacter(name), name).to.equal(undefined);
  });

  it('When a profile, label, channel or group is named with a control, bidi or invisible character, then 400 naming the field; real names pass', () => {
    const cases: { schema: Schema; body: (name: string) => unknown; path: string[] }[] = [
      { schema: profileBodySchema, body: (name: string) => ({ name }), path: ['name'] },
      { schema: labelCreateBodySchema, body: (name: string) => ({ name }), path: ['name'] },
      { schema: channelCreateBodySchema, body: (name: string) => ({ name }), path: ['name'] },
      {
        schema: groupCreateBodySchema,
        body: (subject: string) => ({ subject, participants: ['15551234567'] }),
        path: ['subject'],
      },
    ];
    for (const { schema, body, path } of cases) {
      for (const bad of ['\ud800', 'a\u0000b', '\u202e\u200b', 'x\u2066y'])
        expect(validate(schema, body(bad)).details?.[0]?.path, JSON.stringify(bad)).to.deep.equal(path);
      for (const good of GOOD_NAMES) expect(validate(schema, body(good)).details, good).to.equal(undefined);
    }
  });

  it('When a file name has folders, then it is reduced to its base name', () => {
    expect(safeFileName('menu.pdf')).to.deep.equal({ name: 'menu.pdf' });
    expect(safeFileName('reports/2024/menu.pdf')).to.deep.equal({ name: 'menu.pdf' });
    expect(safeFileName('C:\\Users\\ann\\menu card.pdf')).to.deep.equal({ name: 'menu card.pdf' });
    expect(safeFileName('../../etc/passwd')).to.deep.equal({ name: 'passwd' });
    expect(safeFileName('قائمة الطعام 🍕.pdf')).to.deep.equal({ name: 'قائمة الطعام 🍕.pdf' });
    expect(safeFileName('.bashrc')).to.deep.equal({ name: '.bashrc' });
    expect(safeFileName('console.log')).to.deep.equal({ name: 'console.log' });
    expect(safeFileName('com10.txt')).to.deep.equal({ name: 'com10.txt' });
  });

  it('When a file name is ., .., a Windows device, has controls, U+FFFD, or is over 255 bytes, then it is refused with why', () => {
    const refused: [string, RegExp][] = [
      ['.', /must not be \. or \.\./],
      ['..', /must not be \. or \.\./],
      ['a/..', /must not be \. or \.\./],
      ['', /must name a file/],
      ['   ', /must name a file/],
      ['folder/', /must name a file/],
      ['con', /Windows device/],
      ['CON', /Windows device/],
      ['Nul.txt', /Windows device/],
      ['aux.tar.gz', /Windows device/],
      ['prn ', /Windows device/],
      ['com1', /Windows device/],
      ['LPT9.doc', /Windows device/],
      ['a\u0000.pdf', /control characters/],
      ['a\n.pdf', /control characters/],
      ['invoice\u202efdp.exe', /found U\+202E/],
      ['\ufffd.pdf', /valid UTF-8/],
      ['a\ud800.pdf', /lone surrogate/],
      ['é'.repeat(128) + '.pdf', /at most 255 bytes/],
    ];
    for (const [name, why] of refused) expect(safeFileName(name).refused, JSON.stringify(name)).to.match(why);
    expect(safeFileName('a'.repeat(FILE_NAME_MAX_BYTES)).name).to.have.length(FILE_NAME_MAX_BYTES);
  });

  it('When a file name comes in POST /media or a send, then the schemas reduce or refuse it naming the field', () => {
    expect(validate(mediaUploadQuerySchema, { filename: 'a/b.pdf' }).value).to.deep.equal({
      filename: 'b.pdf',
    });
    expect(validate(mediaUploadQuerySchema, { filename: 'con' }).details?.[0]).to.deep.equal({
      path: ['filename'],
      message: 'filename must not be a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)',
    });
    const send = sendBodySchema(10);
    const attachment = { type: 'document', url: 'https://example.test/x.pdf' };
    const ok = validate(send, { to: '15551234567', attachment: { ...attachment, filename: 'x/menu.pdf' } });
    expect(ok.value?.attachment?.filename).to.equal('menu.pdf');
    const bad = validate(send, { to: '15551234567', attachment: { ...attachment, filename: '\ufffd.pdf' } });
    expect(bad.details?.[0]?.path).to.deep.equal(['attachment', 'filename']);
  });

  it('When declared types and file bytes disagree, then contradictedMediaKind names what the bytes are; agreeing or unknown bytes pass', () => {
    const pdf = Buffer.from('%PDF-1.4\n% menu\n');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);
    const html = Buffer.from('\ufeff  <!DOCTYPE html><html><script>alert(1)</script>');
    const mp4 = Buffer.from([0, 0, 0, 0x18, ...Buffer.from('ftypmp42')]);
    const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0]);
    expect(contradictedMediaKind('text/html', pdf)?.kind).to.equal('PDF');
    expect(contradictedMediaKind('application/pdf', html)?.kind).to.equal('HTML');
    expect(contradictedMediaKind('application/pdf', png)?.kind).to.equal('PNG');
    expect(contradictedMediaKind('image/png', jpeg)?.kind).to.equal('JPEG');
    expect(contradictedMediaKind('image/jpeg', mp4)?.type).to.equal('video/mp4');
    expect(contradictedMediaKind('application/pdf', zip)?.kind).to.equal('ZIP');
    expect(contradictedMediaKind('application/pdf', pdf)).to.equal(undefined);
    expect(contradictedMediaKind('Application/PDF; charset=binary', pdf)).to.equal(undefined);
    expect(contradictedMediaKind('image/jpg', jpeg)).to.equal(undefined);
    expect(contradictedMediaKind('audio/mp4', mp4)).to.equal(undefined);
    expect(contradictedMediaKind('text/plain', html)).to.equal(undefined);
    const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    expect(contradictedMediaKind(docx, zip)).to.equal(undefined);
    expect(contradictedMediaKind('application/octet-stream', html)).to.equal(undefined);
    expect(contradictedMediaKind('image/png', Buffer.from('just some bytes'))).to.equal(undefined);
  });
});
