import { expect } from 'chai';
import type { MessageDeps } from './get-message.js';
import { deviceId, messageFixture, type MessageFixture } from './message-fixture.js';
import { withRevisions } from './revised-record.js';

/**
 * Reading messages without an API: the records in memory, the device's phone <-> LID map in an
 * in-memory Redis, and the stores of what is shown beside a record answering as told.
 */
describe('withRevisions: a record with its edits, or deleted (in-memory revisions)', () => {
  let edits: MessageFixture['edits'];
  let deps: MessageDeps;

  beforeEach(() => {
    ({ edits, deps } = messageFixture());
  });

  it('When a record was edited or deleted, then withRevisions shows its edits and current text, or deleted without its text', async () => {
    const record = { messageId: 'r-1', status: 'sent', text: 'first' };
    edits.set('r-1', { edits: [{ text: 'second', at: '2026-01-01T00:00:00.000Z' }], text: 'second' });
    edits.set('r-2', { deletedAt: '2026-01-02T00:00:00.000Z' });
    expect(await withRevisions(deps, deviceId, record)).to.deep.equal({
      ...record,
      edits: [{ text: 'second', at: '2026-01-01T00:00:00.000Z' }],
      text: 'second',
    });
    expect(await withRevisions(deps, deviceId, { ...record, messageId: 'r-2' })).to.deep.equal({
      messageId: 'r-2',
      status: 'deleted',
      deletedAt: '2026-01-02T00:00:00.000Z',
      text: undefined,
    });
    expect(await withRevisions(deps, deviceId, { ...record, messageId: 'r-3' })).to.deep.equal({
      ...record,
      messageId: 'r-3',
    });
  });
});
