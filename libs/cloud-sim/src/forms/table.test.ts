import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { SANDBOX_NUMBER } from '../sandbox.js';
import { CloudSim } from '../sim.js';
import { MESSAGES_REFERENCE, type WebhookBody } from './context.js';
import { userIdOf } from './deliver.js';
import { WEBHOOK_FORMS } from './table.js';

const NUMBER = SANDBOX_NUMBER;
const ID = NUMBER.id;
const WABA = NUMBER.wabaId;
const USER = '15550102000';

/** A simulator with no subscription: what it delivers is recorded as `unsubscribed`, never sent. */
const setup = () => new CloudSim({ numbers: [{ ...NUMBER }] });
type Json = Record<string, unknown>;
const changes = (bodies: WebhookBody[]) => bodies.flatMap((b) => b.entry.flatMap((e) => e.changes));
const messagesOf = (bodies: WebhookBody[]) =>
  changes(bodies)
    .filter((c) => c.field === 'messages')
    .flatMap((c) => (c.value.messages as Json[] | undefined) ?? []);

describe('cloud-sim: the webhook forms', () => {
  it('When the table is read, then every form has a unique name of its group, an about line and a Meta reference page', () => {
    const names = WEBHOOK_FORMS.map((f) => f.name);
    expect(new Set(names).size).to.equal(names.length);
    for (const form of WEBHOOK_FORMS) {
      expect(form.name.startsWith(`${form.group}.`), form.name).to.equal(true);
      expect(form.about, form.name).to.match(/\S/);
      expect(form.reference, form.name).to.match(/^https:\/\/developers\.facebook\.com\/documentation\//);
    }
    expect(WEBHOOK_FORMS.map((f) => f.group)).to.include.members(['message', 'status', 'envelope', 'field']);
  });

  it('When the README lists the forms, then it names every one of the table in its group', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const form of WEBHOOK_FORMS) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${form.group}.*\``));
      expect(row, form.group).to.be.a('string');
      expect(row, form.name).to.contain(`\`${form.name.slice(form.group.length + 1)}\``);
    }
  });

  it('When each form is delivered, then each body is a WABA envelope whose messages changes name the number', () => {
    const sim = setup();
    for (const form of WEBHOOK_FORMS) {
      const { bodies } = sim.deliverForm(ID, form.name, { from: USER });
      expect(bodies.length, form.name).to.be.greaterThan(0);
      for (const b of bodies) {
        expect(b.object, form.name).to.equal('whatsapp_business_account');
        for (const entry of b.entry) {
          expect(entry.id, form.name).to.equal(WABA);
          for (const change of entry.changes) {
            if (change.field !== 'messages' && change.field !== 'calls') {
              expect(change.value, form.name).not.to.have.property('metadata');
              continue;
            }
            expect(change.value.messaging_product, form.name).to.equal('whatsapp');
            expect(change.value.metadata, form.name).to.deep.equal({
              display_phone_number: '15550100001',
              phone_number_id: ID,
            });
          }
        }
      }
    }
    expect(
      sim.webhooks.deliveries.every((d) => d.state === 'pending' || d.state === 'unsubscribed'),
    ).to.equal(true);
  });

  it('When a user message form is delivered, then its message names the user by phone and BSUID, and opens their window', () => {
    const sim = setup();
    expect(sim.windowOpen(ID, USER)).to.equal(false);
    const delivered = sim.deliverForm(ID, 'message.text', { from: USER, name: 'Ann' });
    const value = changes(delivered.bodies)[0]!.value;
    expect(value.contacts).to.deep.equal([
      { profile: { name: 'Ann' }, wa_id: USER, user_id: userIdOf(WABA, USER) },
    ]);
    const [message] = messagesOf(delivered.bodies);
    expect(message).to.deep.include({ from: USER, from_user_id: userIdOf(WABA, USER), type: 'text' });
    expect(delivered.messageIds).to.deep.equal([message!.id]);
    expect(sim.windowOpen(ID, USER)).to.equal(true);
    expect(userIdOf(WABA, USER)).to.match(/^US\.\d{19}$/);
  });

  it('When a system notice, a group message or a hidden number is delivered, then no window opens', () => {
    const sim = setup();
    for (const name of ['message.system.user-changed-number', 'message.group', 'message.text.no-phone']) {
      const delivered = sim.deliverForm(ID, name, { from: USER });
      expect(delivered.messageIds, name).to.have.length(1);
    }
    expect(sim.windowOpen(ID, USER)).to.equal(false);
    const [notice] = messagesOf(sim.deliverForm(ID, 'message.system.user-changed-number').bodies);
    expect(notice).to.deep.include({ type: 'system' });
    expect((notice!.system as Json).wa_id).to.equal('15550102001');
  });

  it('When a media form is delivered, then the file is kept for the business token with the sha256 the webhook names', () => {
    const sim = setup();
    const delivered = sim.deliverForm(ID, 'message.document', { from: USER });
    const [message] = messagesOf(delivered.bodies);
    const doc = message!.document as Json;
    expect(doc).to.deep.include({ filename: 'invoice-0042.pdf', mime_type: 'application/pdf' });
    const [file] = delivered.files;
    expect(doc.id).to.equal(file!.id);
    expect(doc.sha256).to.equal(file!.sha256);
    expect(doc.url).to.equal(`${sim.baseUrl}/media-download/${file!.id}`);
    const node = sim.resolve(file!.id, sim.authenticate(NUMBER.accessToken));
    expect(node.kind).to.equal('media');
    if (node.kind === 'media') expect(node.media.data.equals(file!.bytes)).to.equal(true);
    expect(file!.bytes.subarray(0, 8).toString('latin1')).to.equal('%PDF-1.7');
  });

  it('When a status form names a message the simulator sent, then it carries its wamid, recipient and callback data', () => {
    const sim = setup();
    sim.deliverForm(ID, 'message.text', { from: USER });
    const reach = sim.authenticate(NUMBER.accessToken);
    const node = sim.resolve(ID, reach);
    if (node.kind !== 'number') throw new Error('expected the number');
    const sent = sim.send(node.number, {
      messaging_product: 'whatsapp',
      to: USER,
      type: 'text',
      text: { body: 'hi' },
      biz_opaque_callback_data: 'msg-42',
    }) as { messages: { id: string }[] };
    const wamid = sent.messages[0]!.id;
    const delivered = sim.deliverForm(ID, 'status.out-of-order', { target: wamid });
    const statuses = delivered.bodies.map((b) => (changes([b])[0]!.value.statuses as Json[])[0]!);
    expect(statuses.map((s) => s.status)).to.deep.equal(['read', 'delivered', 'sent']);
    for (const s of statuses)
      expect(s).to.deep.include({ id: wamid, recipient_id: USER, biz_opaque_callback_data: 'msg-42' });
    expect(statuses[2]!.pricing).to.deep.equal({
      billable: true,
      pricing_model: 'PMP',
      type: 'regular',
      category: 'utility',
    });
    const [unknown] = changes(sim.deliverForm(ID, 'status.unknown-message', { target: wamid }).bodies);
    expect((unknown!.value.statuses as Json[])[0]!.id).not.to.equal(wamid);
  });

  it('When a form is asked with times, then each body is queued that many times, in order', () => {
    const sim = setup();
    const before = sim.webhooks.deliveries.length;
    const delivered = sim.deliverForm(ID, 'status.read-after-failed', { times: 2 });
    const bodies = sim.webhooks.deliveries.slice(before).map((d) => d.body);
    expect(bodies).to.deep.equal([
      JSON.stringify(delivered.bodies[0]),
      JSON.stringify(delivered.bodies[0]),
      JSON.stringify(delivered.bodies[1]),
      JSON.stringify(delivered.bodies[1]),
    ]);
  });

  it('When a form, a target, a user or a count is unknown or malformed, then the simulator refuses it by status', () => {
    const sim = setup();
    const status = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as { status: number }).status;
      }
      return 200;
    };
    expect(status(() => sim.deliverForm(ID, 'message.nope'))).to.equal(404);
    expect(status(() => sim.deliverForm('9999', 'message.text'))).to.equal(404);
    expect(status(() => sim.deliverForm(ID, 'status.read', { target: 'wamid.nope' }))).to.equal(404);
    expect(status(() => sim.deliverForm(ID, 'message.text', { from: '12' }))).to.equal(400);
    expect(status(() => sim.deliverForm(ID, 'message.text', { times: 9 }))).to.equal(400);
    expect(status(() => sim.deliverForm(ID, 'message.text', { name: 42 }))).to.equal(400);
    expect(MESSAGES_REFERENCE).to.match(/webhooks\/reference\/messages$/);
  });
});
