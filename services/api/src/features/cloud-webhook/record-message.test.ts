import { expect } from 'chai';
import { CLOUD_WINDOW_MS, KIND_LIMITS } from '@mgw/contracts';
import { inboundInput, recordMessage } from './record-message.js';
import { MemoryInbound, inboundText } from './webhook-fixture.js';

describe('cloud-webhook: contacts’ messages are recorded', () => {
  it('When a text arrives twice (Meta redelivers), then it is recorded once and the window runs from it', async () => {
    const memory = new MemoryInbound();
    const deps = memory.deps();
    const now = Date.now();
    const event = inboundText({ timestampMs: now - 1000, contextWamid: 'wamid.out1' });
    expect(await recordMessage(deps, 'd1', event, now)).to.equal('applied');
    expect(await recordMessage(deps, 'd1', event, now)).to.equal('unchanged');
    expect(memory.recorded.get('d1/wamid.in1')).to.deep.include({
      platformMessageId: 'wamid.in1',
      from: '15550102000',
      contact: { phone: '15550102000' },
      text: 'hello',
      quotedPlatformMessageId: 'wamid.out1',
    });
    expect(memory.windows.get('d1/15550102000')).to.equal(now - 1000);
  });

  it('When a message is dated ahead of now, then it is received, and its window counted, from now', async () => {
    const memory = new MemoryInbound();
    const now = Date.now();
    await recordMessage(memory.deps(), 'd1', inboundText({ timestampMs: now + CLOUD_WINDOW_MS }), now);
    expect(memory.windows.get('d1/15550102000')).to.equal(now);
    expect(memory.recorded.get('d1/wamid.in1')!.receivedAt.getTime()).to.equal(now);
  });

  it('When the contact has a username, then the record names them by phone and username', async () => {
    const memory = new MemoryInbound();
    const deps = memory.deps();
    await recordMessage(deps, 'd1', inboundText({ username: 'ann.shopper' }));
    expect(memory.recorded.get('d1/wamid.in1')!.contact).to.deep.equal({
      phone: '15550102000',
      username: 'ann.shopper',
    });
  });

  it('When a text is an opt-out keyword, then the list changes once; a media caption is no keyword', async () => {
    const memory = new MemoryInbound();
    const deps = memory.deps();
    await recordMessage(deps, 'd1', inboundText({ text: 'STOP' }));
    await recordMessage(deps, 'd1', inboundText({ text: 'STOP' }));
    await recordMessage(
      deps,
      'd1',
      inboundText({
        wamid: 'wamid.in2',
        type: 'image',
        text: undefined,
        media: { type: 'image', id: 'm1', caption: 'STOP' },
      }),
    );
    expect(memory.keywords).to.deep.equal(['d1/15550102000']);
  });

  it('When the contact taps a button or a quick reply, then its title is their text and may be a keyword; a flow answer is none', async () => {
    const memory = new MemoryInbound();
    const deps = memory.deps();
    const says = (from: string, reply: 'button' | 'nfm_reply') =>
      recordMessage(
        deps,
        'd1',
        inboundText({
          wamid: `wamid.${reply}`,
          from,
          type: reply,
          text: 'STOP',
          reply,
          contextWamid: 'wamid.out1',
        }),
      );
    expect(await says('15550102000', 'button')).to.equal('applied');
    expect(memory.recorded.get('d1/wamid.button')).to.deep.include({
      text: 'STOP',
      quotedPlatformMessageId: 'wamid.out1',
    });
    expect(await says('15550102009', 'nfm_reply')).to.equal('applied');
    expect(memory.keywords, 'the tap, not the flow answer').to.deep.equal(['d1/15550102000']);
  });

  it('When a reaction arrives, then it goes on the message it names, once, and records no message', async () => {
    const memory = new MemoryInbound();
    const deps = memory.deps();
    const reaction = inboundText({
      type: 'reaction',
      text: undefined,
      reaction: { wamid: 'wamid.out1', emoji: '👍' },
    });
    expect(await recordMessage(deps, 'd1', reaction)).to.equal('applied');
    expect(await recordMessage(deps, 'd1', reaction)).to.equal('unchanged');
    expect(memory.recorded.size).to.equal(0);
    expect(memory.reactions).to.deep.equal(['d1/wamid.in1']);
  });

  it('When a message is of a kind the contract has no field for, then it is not recorded, yet the window opens', async () => {
    const memory = new MemoryInbound();
    const now = Date.now();
    const event = inboundText({ type: 'interactive', text: undefined, timestampMs: now });
    expect(await recordMessage(memory.deps(), 'd1', event, now)).to.equal('unsupported');
    expect(memory.recorded.size).to.equal(0);
    expect(memory.windows.get('d1/15550102000')).to.equal(now);
  });

  it('When the contact changed their number, or wrote in a group, then nothing is recorded and no window opens', async () => {
    const memory = new MemoryInbound();
    const notice = inboundText({ type: 'system', text: undefined });
    expect(await recordMessage(memory.deps(), 'd1', notice)).to.equal('unsupported');
    const group = inboundText({ wamid: 'wamid.g1', groupId: 'Y2FwaV9ncm91cDox' });
    expect(await recordMessage(memory.deps(), 'd1', group)).to.equal('unsupported');
    expect(memory.recorded.size).to.equal(0);
    expect(memory.windows.size).to.equal(0);
  });

  it('When Meta does not share the contact’s phone, then the message is counted as such, not recorded, and no window opens', async () => {
    const memory = new MemoryInbound();
    const hidden = inboundText({
      from: undefined,
      userId: 'US.13491208655302741918',
      username: 'ann.shopper',
    });
    expect(await recordMessage(memory.deps(), 'd1', hidden)).to.equal('no_phone');
    expect(memory.recorded.size).to.equal(0);
    expect(memory.windows.size).to.equal(0);
  });

  it('When media, a location or cards arrive, then the record holds what the linked engine keeps of them', () => {
    const at = new Date();
    const contact = { phone: '15550102000' };
    expect(
      inboundInput(
        inboundText({
          type: 'document',
          text: undefined,
          media: { type: 'document', id: 'm1', filename: 'a.pdf', caption: 'see' },
        }),
        contact,
        at,
      ),
    ).to.deep.include({
      text: 'see',
      attachment: { type: 'document', mimeType: 'application/octet-stream', fileName: 'a.pdf', size: 0 },
      cloudMediaId: 'm1',
    });
    expect(
      inboundInput(
        inboundText({ type: 'location', text: undefined, location: { latitude: 1, longitude: 2 } }),
        contact,
        at,
      ).location,
    ).to.deep.equal({ latitude: 1, longitude: 2 });
    const cards = inboundInput(
      inboundText({
        type: 'contacts',
        text: undefined,
        contacts: [
          {
            name: 'Bo',
            phones: [{ phone: '+1 555 010 3000' }, { phone: 'x', waId: '15550103001' }, { phone: '12' }],
          },
          { name: 'Nobody', phones: [{ phone: 'none' }] },
        ],
      }),
      contact,
      at,
    ).contacts;
    expect(cards).to.deep.equal([
      { name: 'Bo', phones: ['15550103000', '15550103001'] },
      { name: 'Nobody', phones: [] },
    ]);
  });

  it('When cards carry an email and a company, or are more than a message keeps, then the record has those of a linked card', () => {
    const card = {
      name: 'Ana',
      phones: [{ phone: '+55 11 98765-4321' }],
      email: 'ana@example.com',
      organization: 'ACME',
    };
    const cards = inboundInput(
      inboundText({ type: 'contacts', text: undefined, contacts: Array.from({ length: 12 }, () => card) }),
      { phone: '15550102000' },
      new Date(),
    ).contacts;
    expect(cards).to.have.length(KIND_LIMITS.contacts);
    expect(cards![0]).to.deep.equal({
      name: 'Ana',
      phones: ['5511987654321'],
      email: 'ana@example.com',
      organization: 'ACME',
    });
  });
});
