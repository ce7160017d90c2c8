import { expect } from 'chai';
import { ATTACHMENT_MAX_BYTES, PRIORITY, seededMessageId, type SendBody } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { MemoryAcceptor, MemoryMessages } from './memory-send.js';
import { EngineCache } from '../cloud-send/index.js';
import {
  contentOf,
  dueAt,
  idsOf,
  personalisation,
  sendMessage,
  withUploadedMedia,
  type SendDeps,
} from './send-message.js';

/** POST /send's use case without an API: the send pipeline in memory (its acceptor, its records). */
describe('sendMessage: a /send accepted as one job per recipient (an in-memory send pipeline)', () => {
  const deviceId = 'sm-1';
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let blocked: Set<string>;
  let deps: SendDeps;

  beforeEach(() => {
    messages = new MemoryMessages();
    acceptor = new MemoryAcceptor(messages);
    blocked = new Set();
    const redis = new MemoryRedis().client;
    deps = {
      acceptor,
      messages,
      inbound: { get: async () => undefined },
      redis,
      media: {
        get: async (d, id) =>
          d === deviceId && id === 'med-1'
            ? ({ mediaId: 'med-1', size: 2048, mimeType: 'image/png', fileName: 'a.png' } as never)
            : undefined,
      },
      blocklist: { isBlocked: async (_d, to) => blocked.has(to) },
      // A linked device: no Cloud API rule applies (features/cloud-send has its own tests).
      cloudSend: {
        redis,
        engines: new EngineCache({ engineOf: async () => 'linked' }),
        cloudDevices: { get: async () => undefined },
        templates: { named: async () => [] },
        logger: { warn: () => undefined },
      },
    };
  });
  const send = (body: Partial<SendBody>, seed?: string) =>
    sendMessage(deps, deviceId, body as SendBody, undefined, seed);

  it('When a single recipient is sent to, then one job with the text at send priority, checked against the blocklist by the accept call', async () => {
    const outcome = await send({ to: '15550001111', text: 'Hi' });
    expect(outcome).to.deep.include({ kind: 'accepted' });
    const [req] = acceptor.requests;
    expect(req).to.deep.include({
      deviceId,
      kind: 'send',
      recipients: ['15550001111'],
      content: { text: 'Hi' },
      priority: PRIORITY.send,
      blocklistCheck: '15550001111',
    });
    expect((outcome as { messageId: string }).messageId).to.equal(
      messages.jobs.values().next().value!.messageId,
    );
  });

  it('When a list is sent to, then one request of a batch id and the messageIds in `to` order; no blocklist check in the accept (each recipient fails on its own)', async () => {
    const outcome = await send({ to: ['15550001111', '15550002222'], text: 'Hi' });
    expect(outcome.kind).to.equal('list_accepted');
    const { batchId, messageIds } = outcome as { batchId: string; messageIds: string[] };
    const req = acceptor.requests[0]!;
    expect(req.batchId).to.equal(batchId);
    expect(req.blocklistCheck).to.equal(undefined);
    expect(messageIds.map((id) => messages.records.get(`${deviceId}\n${id}`)!.to)).to.deep.equal([
      '15550001111',
      '15550002222',
    ]);
  });

  it('When the request is refused before its accept call, then a blocked single recipient is what it is refused for, whatever else is wrong', async () => {
    blocked.add('15550001111');
    const tooLarge = Buffer.alloc(ATTACHMENT_MAX_BYTES + 3).toString('base64');
    expect(
      await send({ to: '15550001111', attachment: { type: 'image', mediaId: 'med-x' } } as never),
    ).to.deep.equal({
      kind: 'refused',
      reason: 'recipient_blocked',
      recipient: '15550001111',
    });
    expect(
      await send({ to: '15550002222', attachment: { type: 'image', mediaId: 'med-x' } } as never),
    ).to.deep.equal({
      kind: 'refused',
      reason: 'media_not_found',
    });
    expect(
      await send({ to: '15550002222', attachment: { type: 'image', base64: tooLarge } } as never),
    ).to.deep.equal({
      kind: 'refused',
      reason: 'attachment_too_large',
    });
    expect(acceptor.requests).to.deep.equal([]);
  });

  it('When an Idempotency-Key seeds the request, then its ids are the seed’s, the same in every run; a refusal of the accept comes back as it is', async () => {
    const first = await send({ to: ['15550001111', '15550002222'], text: 'Hi' }, 'seed-1');
    expect(first).to.deep.equal({
      kind: 'list_accepted',
      batchId: seededMessageId('seed-1', 'batch'),
      messageIds: [seededMessageId('seed-1', 0), seededMessageId('seed-1', 1)],
    });
    expect(acceptor.requests[0]).to.deep.include({
      idempotent: true,
      contentId: seededMessageId('seed-1', 'content'),
    });
    expect(idsOf('seed-1', 2)).to.deep.equal({
      messageIds: [seededMessageId('seed-1', 0), seededMessageId('seed-1', 1)],
      batchId: seededMessageId('seed-1', 'batch'),
      contentId: seededMessageId('seed-1', 'content'),
    });
    acceptor.refusals.push({ kind: 'refused', reason: 'quota_exceeded' } as never);
    expect(await send({ to: '15550001111', text: 'Hi' })).to.deep.equal({
      kind: 'refused',
      reason: 'quota_exceeded',
    });
  });

  it('When a send is personalised, then each recipient’s variables (only those the text uses) go with it; one lacking one is refused with its path', async () => {
    await send({
      to: [{ phone: '15550001111', vars: { name: 'Ana', unused: 'x' } }, '15550002222'],
      text: 'Hi {{name}}',
    } as never);
    expect(acceptor.requests).to.deep.equal([]);
    const outcome = await send({
      to: [
        { phone: '15550001111', vars: { name: 'Ana', unused: 'x' } },
        { phone: '15550002222', vars: { name: 'Bo' } },
      ],
      text: 'Hi {{name}}',
    } as never);
    expect(outcome.kind).to.equal('list_accepted');
    expect(acceptor.requests[0]!.vars).to.deep.equal([{ name: 'Ana' }, { name: 'Bo' }]);
    expect(acceptor.requests[0]!.content.personalised).to.equal(true);
    const refused = personalisation(['15550001111', { phone: '15550002222', vars: {} }], {
      text: 'Hi {{name}}',
    });
    expect(refused).to.deep.include({ kind: 'refused', reason: 'invalid' });
    expect(
      personalisation(['15550001111'], { text: 'Hi {{name}}' }),
      'plain numbers: sent as written',
    ).to.deep.equal({
      content: { text: 'Hi {{name}}' },
    });
  });

  it('When the content is built, then an attachment is its source (bytes kept, a URL, or an uploaded object filled in from the store)', async () => {
    const bytes = Buffer.from('png bytes');
    const stored = contentOf({
      to: 'x',
      attachment: { type: 'image', base64: bytes.toString('base64'), caption: 'c' },
    } as SendBody);
    expect(stored).to.deep.equal({
      content: { attachment: { type: 'image', source: { stored: true, size: bytes.length }, caption: 'c' } },
      media: bytes,
    });
    expect(contentOf({ to: 'x', text: 't', linkPreview: false } as SendBody)).to.deep.equal({
      content: { text: 't', linkPreview: false },
    });
    const uploaded = contentOf({ to: 'x', attachment: { type: 'image', mediaId: 'med-1' } } as SendBody) as {
      content: Parameters<typeof withUploadedMedia>[2];
    };
    expect(await withUploadedMedia(deps, deviceId, uploaded.content)).to.equal(undefined);
    expect(uploaded.content.attachment).to.deep.equal({
      type: 'image',
      source: { mediaId: 'med-1', size: 2048 },
      mimeType: 'image/png',
      filename: 'a.png',
    });
    expect(
      await withUploadedMedia(deps, 'sm-other', {
        attachment: { type: 'image', source: { mediaId: 'med-1', size: 0 } },
      }),
    ).to.deep.equal({
      kind: 'refused',
      reason: 'media_not_found',
    });
  });

  it('When a sendAt is given, then a future one holds the messages until it, a past one is sent now', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    expect(dueAt(later)).to.equal(Date.parse(later));
    expect(dueAt(new Date(Date.now() - 1000).toISOString())).to.equal(undefined);
    expect(dueAt(undefined)).to.equal(undefined);
    await send({ to: '15550001111', text: 'Later', sendAt: later });
    expect(acceptor.requests[0]!.sendAt).to.equal(Date.parse(later));
  });

  it('When the body edits or deletes, then it is a revision (its target is looked up); a username without a way to resolve it is refused', async () => {
    expect(await send({ to: '15550001111', delete: { messageId: 'nope' } })).to.deep.equal({
      kind: 'refused',
      reason: 'revision_target_not_found',
    });
    const refused = await send({ to: '@alice.shop', text: 'Hi' });
    expect(refused).to.deep.include({ kind: 'refused', reason: 'invalid' });
    expect(acceptor.requests).to.deep.equal([]);
  });
});
