import { expect } from 'chai';
import type { TemplateInput } from '@mgw/contracts';
import type { CatalogEntry } from './template-catalog.js';
import { templateRefusal } from './template-check.js';

const entry = (language: string, status = 'APPROVED', params: CatalogEntry['params'] = {}): CatalogEntry => ({
  name: 'order_update',
  language,
  status,
  category: 'UTILITY',
  params,
  components: [],
});
const text = (t: string) => ({ type: 'text', text: t });

describe('templateRefusal: a template judged against the number’s templates of its name', () => {
  it('When the WABA has no such template, or not in that language, then template_not_found names the template and the languages it has', () => {
    const input: TemplateInput = { name: 'order_update', language: 'fr' };
    expect(templateRefusal(input, [])).to.deep.equal({
      kind: 'refused',
      reason: 'template_not_found',
      details: [
        {
          path: ['template'],
          message: 'No template "order_update" (fr) in the number\'s WhatsApp Business Account',
          reason: 'template_not_found',
        },
      ],
    });
    const refusal = templateRefusal(input, [entry('en_US'), entry('ar')]);
    expect(refusal).to.nested.include({
      reason: 'template_not_found',
      'details[0].message':
        'No template "order_update" (fr) in the number\'s WhatsApp Business Account: it exists in ar, en_US',
    });
  });

  it('When the template is paused, or pending, then template_not_approved says which, with the failure reason of each', () => {
    const input: TemplateInput = { name: 'order_update', language: 'en_US' };
    expect(templateRefusal(input, [entry('en_US', 'PAUSED')])).to.nested.include({
      reason: 'template_not_approved',
      'details[0].reason': 'template_paused',
      'details[0].message':
        'Template "order_update" (en_US) is paused by WhatsApp (its quality is low): it cannot be sent until it is active again',
    });
    expect(templateRefusal(input, [entry('en_US', 'PENDING')])).to.nested.include({
      reason: 'template_not_approved',
      'details[0].reason': 'template_not_found',
      'details[0].message': 'Template "order_update" (en_US) is not approved: its status is PENDING',
    });
  });

  it('When every component has as many parameters as its placeholders, then nothing is refused', () => {
    const approved = entry('en_US', 'APPROVED', { header: 1, body: 2, buttons: { 1: 1 } });
    const input: TemplateInput = {
      name: 'order_update',
      language: 'en_US',
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { id: '9' } }] },
        { type: 'body', parameters: [text('a'), text('b')] },
        { type: 'button', sub_type: 'url', index: 1, parameters: [text('x')] },
      ],
    };
    expect(templateRefusal(input, [approved])).to.equal(undefined);
    expect(templateRefusal({ name: 'order_update', language: 'en_US' }, [entry('en_US')])).to.equal(
      undefined,
    );
  });

  it('When a component has more or fewer parameters than its placeholders, or one the template lacks, then 400 names each component', () => {
    const approved = entry('en_US', 'APPROVED', { body: 2, buttons: { 0: 1 } });
    const input: TemplateInput = {
      name: 'order_update',
      language: 'en_US',
      components: [
        { type: 'header', parameters: [text('h')] },
        { type: 'body', parameters: [text('a')] },
      ],
    };
    expect(templateRefusal(input, [approved])).to.deep.equal({
      kind: 'refused',
      reason: 'invalid',
      details: [
        {
          path: ['template', 'components', 1, 'parameters'],
          message: 'template order_update (en_US): its body takes 2 parameters, 1 given',
        },
        {
          path: ['template', 'components'],
          message: 'template order_update (en_US): its button 0 takes 1 parameter, 0 given',
        },
        {
          path: ['template', 'components', 0, 'parameters'],
          message: 'template order_update (en_US): its header takes no parameters, 1 given',
        },
      ],
    });
  });
});
