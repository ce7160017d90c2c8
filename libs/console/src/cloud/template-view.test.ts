import { expect } from 'chai';
import type { CloudTemplate } from '../kit/api';
import {
  buttonKind,
  categoryWords,
  parameterWords,
  placeholderParts,
  statusesOf,
  templateMatches,
  templateStatusOf,
} from './template-view';

/** The Templates tab's words and filter without a browser (template-view.ts). */
describe('console: a Cloud API number’s templates as the Templates tab reads them (template-view.ts)', () => {
  const template = (name: string, status: string): CloudTemplate => ({
    name,
    language: 'en_US',
    status,
    category: 'UTILITY',
    parameters: {},
    components: [],
  });

  it("When Meta's words are shown, then each reads as words, with the badge's band of what it means for sending", () => {
    expect(templateStatusOf('APPROVED')).to.deep.equal({ words: 'Approved', band: 'connected' });
    expect(templateStatusOf('PAUSED')).to.deep.equal({ words: 'Paused', band: 'connecting' });
    expect(templateStatusOf('IN_APPEAL')).to.deep.equal({ words: 'In appeal', band: 'connecting' });
    expect(templateStatusOf('REJECTED')).to.deep.equal({ words: 'Rejected', band: 'failed' });
    expect(templateStatusOf('LIMIT_EXCEEDED')).to.deep.equal({ words: 'Limit exceeded', band: '' });
    expect(categoryWords('AUTHENTICATION')).to.equal('Authentication');
    expect(buttonKind({ type: 'QUICK_REPLY' })).to.equal('Quick reply');
    expect(buttonKind({ type: 'OTP', otpType: 'COPY_CODE' })).to.equal('Code (copy code)');
    expect(buttonKind({ type: 'SOMETHING_NEW' })).to.equal('Something new');
  });

  it('When a text has placeholders, then they are picked out in order, positional and named alike', () => {
    expect(placeholderParts('Hi {{first_name}}, order {{1}} shipped.{{ 2 }}')).to.deep.equal([
      { text: 'Hi ', placeholder: false },
      { text: '{{first_name}}', placeholder: true },
      { text: ', order ', placeholder: false },
      { text: '{{1}}', placeholder: true },
      { text: ' shipped.', placeholder: false },
      { text: '{{ 2 }}', placeholder: true },
    ]);
    expect(placeholderParts('No placeholder {{}} here')).to.deep.equal([
      { text: 'No placeholder {{}} here', placeholder: false },
    ]);
    expect(placeholderParts('')).to.deep.equal([]);
  });

  it('When the parameters are counted, then each component that takes some is named', () => {
    expect(parameterWords({ header: 1, body: 2, buttons: { 0: 1, 2: 1 } })).to.equal(
      'header 1, body 2, button 0: 1, button 2: 1',
    );
    expect(parameterWords({ body: 0 })).to.equal('none');
  });

  it('When the list is filtered, then by a part of the name in any case and by the exact status; the statuses approved first', () => {
    const list = [
      template('order_update', 'APPROVED'),
      template('spring_sale', 'PAUSED'),
      template('order_paid', 'REJECTED'),
    ];
    expect(list.filter((t) => templateMatches(t, ' ORDER', '')).map((t) => t.name)).to.deep.equal([
      'order_update',
      'order_paid',
    ]);
    expect(list.filter((t) => templateMatches(t, 'order', 'REJECTED')).map((t) => t.name)).to.deep.equal([
      'order_paid',
    ]);
    expect(statusesOf(list)).to.deep.equal(['APPROVED', 'PAUSED', 'REJECTED']);
  });
});
