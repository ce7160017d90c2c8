import { expect } from 'chai';
import { GraphError } from './errors.js';
import { CloudSim, type CloudSimConfig } from './sim.js';
import { WINDOW_MS } from './window.js';

const NUMBER = {
  id: '1001',
  wabaId: '2001',
  displayPhoneNumber: '+1 555-010-0001',
  verifiedName: 'Test Shop',
  accessToken: 'token-1',
  appSecret: 'secret-1',
};
const USER = '15550102000';
const text = (to = USER) => ({ messaging_product: 'whatsapp', to, type: 'text', text: { body: 'hi' } });
const template = (to = USER, name = 'verification_code') => ({
  messaging_product: 'whatsapp',
  to,
  type: 'template',
  template: { name, language: { code: 'en_US' } },
});

/** A simulator with no webhook subscribed: events are recorded, nothing is sent over a network. */
function setup(config: Omit<CloudSimConfig, 'numbers'> = {}, number: object = {}) {
  const sim = new CloudSim({ numbers: [{ ...NUMBER, ...number }], ...config });
  const reach = sim.authenticate('token-1');
  const node = sim.resolve('1001', reach);
  if (node.kind !== 'number') throw new Error('expected the number');
  return { sim, send: (body: unknown) => sim.send(node.number, body) };
}
const code = (fn: () => unknown): number => {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(GraphError);
    return (err as GraphError).code;
  }
  throw new Error('expected a refusal');
};

describe('cloud-sim: sending rules (in process)', () => {
  it('When no user message opened a window, then free-form is refused with 131047 and a template goes', () => {
    const { sim, send } = setup();
    expect(code(() => send(text()))).to.equal(131047);
    const answer = send(template()) as { contacts: unknown; messages: { id: string }[] };
    expect(answer.contacts).to.deep.equal([{ input: USER, wa_id: USER }]);
    expect(answer.messages[0]!.id).to.match(/^wamid\./);
    expect(sim.sent()[0]).to.include({ type: 'template', pricingCategory: 'authentication', status: 'sent' });
    sim.close();
  });

  it('When the user wrote, then free-form goes for 24 hours and is refused after', () => {
    const { sim, send } = setup();
    sim.inbound('1001', { from: USER, text: 'hello' });
    send(text());
    sim.advanceClock(WINDOW_MS);
    expect(code(() => send(text()))).to.equal(131047);
    sim.close();
  });

  it('When a template is missing, paused or not approved, then 132001, 132015 and 132016 answer', () => {
    const { sim, send } = setup();
    expect(code(() => send(template(USER, 'nope')))).to.equal(132001);
    sim.setTemplateStatus('2001', 'verification_code', 'en_US', 'PAUSED');
    expect(code(() => send(template()))).to.equal(132015);
    sim.setTemplateStatus('2001', 'verification_code', 'en_US', 'REJECTED');
    expect(code(() => send(template()))).to.equal(132016);
    sim.close();
  });

  it("When more messages than the number's throughput go in one second, then 130429 answers until the second passes", () => {
    const { sim, send } = setup({ pairRate: { limit: 100 } }, { throughputPerSecond: 3 });
    for (let i = 0; i < 3; i++) send(template(`1555010300${i}`));
    expect(code(() => send(template('15550103009')))).to.equal(130429);
    sim.advanceClock(1000);
    send(template('15550103009'));
    sim.close();
  });

  it('When one recipient gets more than the pair rate, then 131056 answers while others still get messages', () => {
    const { sim, send } = setup({ pairRate: { limit: 2, windowMs: 6000 } });
    send(template());
    send(template());
    expect(code(() => send(template()))).to.equal(131056);
    send(template('15550109999'));
    sim.advanceClock(6000);
    send(template());
    sim.close();
  });

  it("When new recipients outside a window pass the tier's limit, then 131048 answers; in-window and known ones go", () => {
    const { sim, send } = setup({}, { messagingLimitTier: 'TIER_50' });
    for (let i = 0; i < 50; i++) send(template(`155501040${String(i).padStart(2, '0')}`));
    expect(code(() => send(template('15550105000')))).to.equal(131048);
    send(template('15550104000'));
    sim.inbound('1001', { from: '15550106000', text: 'hi' });
    send(template('15550106000'));
    sim.advanceClock(WINDOW_MS);
    send(template('15550105000'));
    sim.close();
  });

  it('When a status is marked, then the message moves forward only, and read first passes by delivered', () => {
    const { sim, send } = setup();
    const id = (send(template()) as { messages: { id: string }[] }).messages[0]!.id;
    sim.markStatus(id, 'read');
    expect(sim.sent()[0]!.statuses.map((s) => s.status)).to.deep.equal(['sent', 'delivered', 'read']);
    expect(() => sim.markStatus(id, 'delivered')).to.throw(/cannot become/);
    expect(() => sim.markStatus(id, 'failed')).to.throw(/cannot fail/);
    sim.close();
  });

  it('When a token is unknown or expired, then 190 answers with subcodes 467 and 463', () => {
    const { sim } = setup();
    expect(code(() => sim.authenticate('nope'))).to.equal(190);
    sim.expireToken('token-1');
    try {
      sim.authenticate('token-1');
      expect.fail('expected a refusal');
    } catch (err) {
      expect((err as GraphError).subcode).to.equal(463);
    }
    sim.close();
  });

  it("When a token reaches another number's id, then the id does not exist for it (100)", () => {
    const sim = new CloudSim({ numbers: [NUMBER, { ...NUMBER, id: '1002', accessToken: 'token-2' }] });
    expect(code(() => sim.resolve('1002', sim.authenticate('token-1')))).to.equal(100);
    sim.close();
  });
});
