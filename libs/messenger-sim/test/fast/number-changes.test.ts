import { expect } from 'chai';
import type { SimulatorHandle } from '../../src/index.js';
import { startTestSimulator } from '@mgw/testing';

/** `POST /contacts/:phone/number`: a contact changes its number, its LID kept (number-changes.ts). */
describe('messenger-sim: a contact changes its number (whatsmeow 563bcaa0)', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    sim = await startTestSimulator();
  });
  after(async () => {
    await sim.close();
  });

  it('When a contact changes its number, then it keeps its LID under the new one and the old number is free (registered again: a new account with a new LID)', async () => {
    const before = (await call('POST', '/contacts', { phone: '15550710001', addressing: 'lid' })).body;
    const moved = await call('POST', '/contacts/15550710001/number', { phone: '+1 555 071 0002' });
    expect(moved.status).to.equal(200);
    expect(moved.body).to.include({ phone: '15550710002', lid: before.lid, addressing: 'lid' });
    const again = (await call('POST', '/contacts', { phone: '15550710001' })).body;
    expect(again.lid).to.be.a('string').and.not.equal(before.lid);
  });

  it('When the new number is taken, the contact unknown, or a group member, then it is refused', async () => {
    await call('POST', '/contacts', { phone: '15550710003' });
    await call('POST', '/contacts', { phone: '15550710004' });
    expect((await call('POST', '/contacts/15550710003/number', { phone: '15550710004' })).status).to.equal(
      409,
    );
    expect((await call('POST', '/contacts/15550719999/number', { phone: '15550710005' })).status).to.equal(
      404,
    );
    await call('POST', '/groups', { subject: 'Team', members: ['15550710004', '15550710003'] });
    expect((await call('POST', '/contacts/15550710003/number', { phone: '15550710006' })).status).to.equal(
      409,
    );
  });
});
