import { expect } from 'chai';
import { createMetrics, FAILURE_REASONS, newMessageId } from '@mgw/contracts';
import { applyStatus, failureReasonOf, type StatusDeps } from './apply-status.js';
import { MemoryMessages, status } from './webhook-fixture.js';

describe('cloud-webhook: statuses move the records', () => {
  let messages: MemoryMessages;
  let deps: StatusDeps;
  const mine = newMessageId();
  beforeEach(() => {
    messages = new MemoryMessages();
    deps = { messages, metrics: createMetrics() };
  });

  it('When statuses name the message by its callback data, then it moves sent → delivered → read, each once', async () => {
    messages.add('d1', mine, 'queued');
    for (const s of ['sent', 'delivered', 'read'] as const)
      expect(
        await applyStatus(deps, 'd1', status({ status: s, callbackData: mine, wamid: 'wamid.x' })),
      ).to.equal('applied');
    expect(await applyStatus(deps, 'd1', status({ status: 'delivered', callbackData: mine }))).to.equal(
      'unchanged',
    );
    expect(await applyStatus(deps, 'd1', status({ status: 'sent', callbackData: mine }))).to.equal(
      'unchanged',
    );
    expect(messages.moves).to.deep.equal([`${mine}:sent`, `${mine}:delivered`, `${mine}:read`]);
    // The engine's answer was lost: the record takes the wamid the status named.
    expect(messages.sentAs.get(mine)).to.equal('wamid.x');
  });

  it('When a status has no callback data, then the wamid index finds the message', async () => {
    messages.add('d1', mine, 'sent', 'wamid.out1');
    expect(await applyStatus(deps, 'd1', status({ status: 'read' }))).to.equal('applied');
    expect(messages.status('d1', mine)).to.equal('read');
  });

  it('When a sent message fails, then it fails with the reason its code has; a delivered one never fails', async () => {
    const delivered = newMessageId();
    messages.add('d1', mine, 'sent');
    messages.add('d1', delivered, 'delivered');
    const failed = (callbackData: string, code: number) =>
      status({ status: 'failed', callbackData, errors: [{ code, title: 'x' }] });
    expect(await applyStatus(deps, 'd1', failed(mine, 131047))).to.equal('applied');
    expect(await applyStatus(deps, 'd1', failed(delivered, 131026))).to.equal('unchanged');
    expect(await applyStatus(deps, 'd1', status({ status: 'read', callbackData: mine }))).to.equal(
      'unchanged',
    );
    expect(messages.moves).to.deep.equal([`${mine}:failed:${FAILURE_REASONS.windowClosed}`]);
  });

  it('When a queued message (its send’s answer lost) fails, then it is failed as the sender would, settled', async () => {
    messages.add('d1', mine, 'queued');
    expect(await applyStatus(deps, 'd1', status({ status: 'failed', callbackData: mine }))).to.equal(
      'applied',
    );
    expect(messages.moves).to.deep.equal([`${mine}:failed:${FAILURE_REASONS.undeliverable}`]);
  });

  it('When the callback data names another device’s message, or none of ours, then nothing moves', async () => {
    messages.add('d2', mine, 'sent', 'wamid.out1');
    expect(await applyStatus(deps, 'd1', status({ status: 'read', callbackData: mine }))).to.equal(
      'unknown_message',
    );
    expect(await applyStatus(deps, 'd1', status({ status: 'read', callbackData: 'not-an-id' }))).to.equal(
      'unknown_message',
    );
    messages.records.set(`d1/${mine}`, { messageId: mine, direction: 'inbound', status: 'received' });
    expect(await applyStatus(deps, 'd1', status({ status: 'read', callbackData: mine }))).to.equal(
      'unknown_message',
    );
    expect(messages.moves).to.deep.equal([]);
  });

  it('When errors name codes, then the reasons are the Graph verdicts’; none is undeliverable', () => {
    expect(failureReasonOf(undefined)).to.equal(FAILURE_REASONS.undeliverable);
    expect(failureReasonOf([{ code: 131026, title: 'x' }])).to.equal(FAILURE_REASONS.undeliverable);
    expect(failureReasonOf([{ code: 131047, title: 'x' }])).to.equal(FAILURE_REASONS.windowClosed);
    expect(failureReasonOf([{ code: 132001, title: 'x' }])).to.equal(FAILURE_REASONS.templateNotFound);
    expect(failureReasonOf([{ code: 999999, title: 'x' }])).to.equal(FAILURE_REASONS.rejectedByServer);
  });
});
