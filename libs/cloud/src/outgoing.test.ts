import { expect } from 'chai';
import { CALLBACK_DATA_MAX, graphMessage, hasUrl } from './outgoing.js';

describe('cloud: the Graph message bodies of what the gateway sends', () => {
  it('When a text is sent, then its body carries preview_url and the callback data', () => {
    expect(
      graphMessage(
        { type: 'text', text: 'see https://a.example', previewUrl: true },
        { to: '155', callbackData: 'm1' },
      ),
    ).to.deep.equal({
      to: '155',
      type: 'text',
      text: { body: 'see https://a.example', preview_url: true },
      biz_opaque_callback_data: 'm1',
    });
  });

  it('When a text names a URL or not, then hasUrl says so', () => {
    expect(hasUrl('go to https://x.example/a')).to.equal(true);
    expect(hasUrl('HTTP://X.EXAMPLE')).to.equal(true);
    expect(hasUrl('no link here, not even http:// alone')).to.equal(false);
  });

  it('When a document is sent by media id with a caption, then its object has id, caption and filename', () => {
    const m = graphMessage(
      { type: 'media', mediaType: 'document', media: { id: '77' }, caption: 'c', filename: 'a.pdf' },
      { to: '155' },
    );
    expect(m).to.deep.equal({
      to: '155',
      type: 'document',
      document: { id: '77', caption: 'c', filename: 'a.pdf' },
    });
  });

  it('When audio or a sticker comes with a caption or filename, then neither is sent (the API refuses them)', () => {
    for (const mediaType of ['audio', 'sticker'] as const) {
      const m = graphMessage(
        { type: 'media', mediaType, media: { link: 'https://a.example/x' }, caption: 'c', filename: 'f' },
        { to: '155' },
      );
      expect(m[mediaType]).to.deep.equal({ link: 'https://a.example/x' });
    }
    const image = graphMessage(
      { type: 'media', mediaType: 'image', media: { id: '1' }, filename: 'f.png' },
      { to: '155' },
    );
    expect(image.image).to.deep.equal({ id: '1' });
  });

  it('When a reply is sent, then context.message_id is the target wamid', () => {
    const m = graphMessage(
      { type: 'text', text: 'yes', previewUrl: false },
      { to: '155', replyTo: 'wamid.X' },
    );
    expect(m.context).to.deep.equal({ message_id: 'wamid.X' });
  });

  it('When a reaction, a location or contact cards are sent, then each has the reference shape', () => {
    expect(
      graphMessage({ type: 'reaction', targetWamid: 'wamid.T', emoji: '👍' }, { to: '1' }),
    ).to.deep.equal({
      to: '1',
      type: 'reaction',
      reaction: { message_id: 'wamid.T', emoji: '👍' },
    });
    expect(
      graphMessage(
        { type: 'location', location: { latitude: 1.5, longitude: -2, name: 'Here' } },
        { to: '1' },
      ),
    ).to.deep.equal({ to: '1', type: 'location', location: { latitude: 1.5, longitude: -2, name: 'Here' } });
    const cards = graphMessage(
      {
        type: 'contacts',
        contacts: [{ name: 'Ann', phones: ['+49 170 1'], email: 'a@b.example', organization: 'Org' }],
      },
      { to: '1' },
    );
    expect(cards.contacts).to.deep.equal([
      {
        name: { formatted_name: 'Ann', first_name: 'Ann' },
        phones: [{ phone: '+491701', type: 'CELL', wa_id: '491701' }],
        emails: [{ email: 'a@b.example', type: 'WORK' }],
        org: { company: 'Org' },
      },
    ]);
  });

  it('When a template is sent, then its language is an object with the code and components go as given', () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: '#1' }] }];
    expect(
      graphMessage(
        { type: 'template', template: { name: 'order_update', language: 'en_US', components } },
        { to: '1' },
      ).template,
    ).to.deep.equal({ name: 'order_update', language: { code: 'en_US' }, components });
    expect(
      graphMessage({ type: 'template', template: { name: 't', language: 'ar' } }, { to: '1' }).template,
    ).to.deep.equal({ name: 't', language: { code: 'ar' } });
  });

  it('When the callback data is longer than Meta takes, then it is cut to the bound', () => {
    const m = graphMessage(
      { type: 'text', text: 'x', previewUrl: false },
      { to: '1', callbackData: 'a'.repeat(600) },
    );
    expect(m.biz_opaque_callback_data).to.have.length(CALLBACK_DATA_MAX);
  });
});
