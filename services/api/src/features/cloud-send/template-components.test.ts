import { expect } from 'chai';
import { TEMPLATE_VIEW_LIMITS, templateComponents, templateParams } from './template-components.js';

describe('template components: what a template of the Graph API takes and shows', () => {
  it("When a template's components are counted, then each placeholder counts once, media headers and code or URL buttons take one, quick replies none", () => {
    expect(
      templateParams([
        { type: 'HEADER', format: 'TEXT', text: 'Hi {{name}}' },
        { type: 'BODY', text: '{{1}} and {{2}} and {{ 1 }}' },
        { type: 'FOOTER', text: 'no {{x}} counted' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Yes' },
            { type: 'URL', url: 'https://example.com/{{1}}' },
            { type: 'URL', url: 'https://example.com/' },
            { type: 'OTP', otp_type: 'COPY_CODE' },
          ],
        },
      ]),
    ).to.deep.equal({ header: 1, body: 2, buttons: { 1: 1, 3: 1 } });
    expect(
      templateParams([
        { type: 'HEADER', format: 'IMAGE' },
        { type: 'BODY', text: 'plain' },
      ]),
    ).to.deep.equal({
      header: 1,
      body: 0,
    });
    expect(templateParams([null, 'x', { type: 7 }, { type: 'BUTTONS', buttons: 'no' }])).to.deep.equal({});
  });

  it('When a template is shown, then its header, body, footer and buttons are kept as Meta wrote them, in our fields', () => {
    expect(
      templateComponents([
        { type: 'HEADER', format: 'TEXT', text: 'Hi {{name}}', example: { header_text: ['Ann'] } },
        { type: 'BODY', text: 'Your order {{1}} has shipped.' },
        { type: 'FOOTER', text: 'Reply STOP to stop' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Yes' },
            { type: 'URL', text: 'Track', url: 'https://example.com/{{1}}', example: ['x'] },
            { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550100001' },
            { type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' },
          ],
        },
      ]),
    ).to.deep.equal([
      { type: 'HEADER', format: 'TEXT', text: 'Hi {{name}}' },
      { type: 'BODY', text: 'Your order {{1}} has shipped.' },
      { type: 'FOOTER', text: 'Reply STOP to stop' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Yes' },
          { type: 'URL', text: 'Track', url: 'https://example.com/{{1}}' },
          { type: 'PHONE_NUMBER', text: 'Call us', phoneNumber: '+15550100001' },
          { type: 'OTP', text: 'Copy code', otpType: 'COPY_CODE' },
        ],
      },
    ]);
    expect(templateComponents([{ type: 'header', format: 'image' }])).to.deep.equal([
      { type: 'HEADER', format: 'IMAGE' },
    ]);
  });

  it('When what Meta listed is odd — wrong types, unknown components, overlong texts — then what is shown is bounded and of our shape', () => {
    const long = '😀'.repeat(TEMPLATE_VIEW_LIMITS.text + 5);
    const shown = templateComponents([
      null,
      'x',
      { type: 7 },
      { type: 'CAROUSEL', cards: [] },
      { type: 'BODY', text: long },
      { type: 'FOOTER' },
      { type: 'HEADER', format: '<script>', text: 5 },
      {
        type: 'BUTTONS',
        buttons: [
          null,
          { type: 'quick reply!' },
          { type: 'URL', url: 7 },
          ...Array(20).fill({ type: 'QUICK_REPLY' }),
        ],
      },
    ]);
    expect(shown.map((c) => c.type)).to.deep.equal(['BODY', 'FOOTER', 'HEADER', 'BUTTONS']);
    // Cut at whole code points: no half of a surrogate pair.
    expect([...shown[0]!.text!]).to.have.length(TEMPLATE_VIEW_LIMITS.text);
    expect(shown[0]!.text!.endsWith('😀')).to.equal(true);
    expect(shown[1]).to.deep.equal({ type: 'FOOTER', text: '' });
    expect(shown[2]).to.deep.equal({ type: 'HEADER', format: 'TEXT' });
    const buttons = shown[3]!.buttons!;
    expect(buttons[0]).to.deep.equal({ type: 'URL' });
    expect(buttons, 'the first ten, less the two that are no button').to.have.length(
      TEMPLATE_VIEW_LIMITS.buttons - 2,
    );
    expect(templateComponents(Array(30).fill({ type: 'BODY', text: 'x' }))).to.have.length(
      TEMPLATE_VIEW_LIMITS.components,
    );
  });
});
