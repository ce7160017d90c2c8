import { expect } from 'chai';
import type { EventLog, LoggedEvent } from '@mgw/store';
import { recentEvents, recentEventsQuerySchema } from './recent-events.js';

/** The dashboard's Events tab without Redis: the event log faked (trim, read back). */
describe('recentEvents: the device’s log newest first, trimmed first (a faked log)', () => {
  it('When the events are read, then the log is trimmed first, then read back with the page’s bound, cursor and types', async () => {
    const steps: unknown[] = [];
    const events = [{ id: 'e-2' }, { id: 'e-1' }] as LoggedEvent[];
    const log = {
      trim: async (devices: string[]) => (steps.push(['trim', devices]), 0),
      readBack: async (deviceId: string, q: unknown) => (
        steps.push(['readBack', deviceId, q]),
        { events, olderCursor: '1-0' }
      ),
    } as unknown as EventLog;
    expect(
      await recentEvents(log, 'd-1', { limit: 2, before: '5-0', types: 'message.sent,message.failed' }),
    ).to.deep.equal({
      events,
      olderCursor: '1-0',
    });
    expect(steps).to.deep.equal([
      ['trim', ['d-1']],
      ['readBack', 'd-1', { limit: 2, before: '5-0', types: ['message.sent', 'message.failed'] }],
    ]);
    await recentEvents(log, 'd-1', { limit: 25 });
    expect(steps.at(-1)).to.deep.equal(['readBack', 'd-1', { limit: 25 }]);
  });

  it('When the query is checked, then the limit defaults to 25 and is bounded; a cursor must be one', () => {
    expect(recentEventsQuerySchema.validate({}).value).to.deep.equal({ limit: 25 });
    expect(recentEventsQuerySchema.validate({ limit: 101 }).error).to.not.equal(undefined);
    expect(recentEventsQuerySchema.validate({ before: 'yesterday' }).error?.message).to.include(
      '"before" must be the cursor',
    );
  });
});
