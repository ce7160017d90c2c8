import { expect } from 'chai';
import { errors } from './errors.js';
import { envelope, inboundValue, statusValue } from './payloads.js';

const NUMBER = { id: '1001', wabaId: '2001', displayPhoneNumber: '+1 555-010-0001' };

describe('cloud-sim: webhook payloads', () => {
  it('When a value is wrapped, then it is the WABA entry of a messages change with the number in metadata', () => {
    expect(envelope(NUMBER, { statuses: [] })).to.deep.equal({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '2001',
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550100001', phone_number_id: '1001' },
                statuses: [],
              },
              field: 'messages',
            },
          ],
        },
      ],
    });
  });

  it('When a status is built, then it carries pricing, or errors when failed, and a timestamp in seconds', () => {
    const message = { id: 'wamid.a', waId: '155', pricingCategory: 'utility' };
    expect(statusValue(message, 'delivered', 1_700_000_000_999)).to.deep.equal({
      statuses: [
        {
          id: 'wamid.a',
          status: 'delivered',
          timestamp: '1700000000',
          recipient_id: '155',
          pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
        },
      ],
    });
    const failed = statusValue(message, 'failed', 0, errors.reengagement()).statuses[0]!;
    expect(failed).not.to.have.property('pricing');
    expect(failed.errors).to.deep.equal([errors.reengagement().webhookEntry()]);
    expect((failed.errors as { code: number }[])[0]!.code).to.equal(131047);
  });

  it('When a user writes, then the value names the contact and the text message, with the reply context', () => {
    const value = inboundValue(NUMBER, {
      id: 'wamid.b',
      from: '155',
      name: 'Ann',
      text: 'hi',
      at: 5_000,
      replyTo: 'wamid.a',
    });
    expect(value).to.deep.equal({
      contacts: [{ profile: { name: 'Ann' }, wa_id: '155' }],
      messages: [
        {
          from: '155',
          id: 'wamid.b',
          timestamp: '5',
          type: 'text',
          text: { body: 'hi' },
          context: { from: '15550100001', id: 'wamid.a' },
        },
      ],
    });
  });
});
