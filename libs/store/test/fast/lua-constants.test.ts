import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { EVENT_LOG_MAX_EVENTS, OUTBOX_MAX_EVENTS, keys } from '@mgw/contracts';
import { MESSAGE_INDEX_MAX } from '../../src/index.js';

/**
 * Bounds that TypeScript and the `.lua` files both know: a script file cannot read a TypeScript
 * constant, so it holds its value, and this keeps the two the same.
 */
const lua = (file: string) => readFileSync(new URL(`../../lua/${file}.lua`, import.meta.url), 'utf8');

describe('store: the bounds the Lua scripts hold are the TypeScript ones', () => {
  it('When the event include is read, then its outbox trim is OUTBOX_MAX_EVENTS', () => {
    expect(lua('includes/event-emit')).to.include(`'XADD', outbox, 'MAXLEN', '~', ${OUTBOX_MAX_EVENTS}, '*'`);
  });

  it('When the event include is read, then its event log trim is EVENT_LOG_MAX_EVENTS', () => {
    expect(lua('includes/event-emit')).to.include(`'XADD', log, 'MAXLEN', '~', ${EVENT_LOG_MAX_EVENTS}, '*'`);
  });

  it('When the event include is read, then it publishes on keys.eventLogChannel (the outbox channel plus :log)', () => {
    expect(`${keys.eventsChannel()}:log`).to.equal(keys.eventLogChannel());
    expect(lua('includes/event-emit')).to.include(`redis.call('PUBLISH', channel .. ':log', deviceId)`);
  });

  it('When the message index include is read, then it keeps MESSAGE_INDEX_MAX ids', () => {
    expect(lua('includes/message-index')).to.include(
      `'ZREMRANGEBYRANK', index, 0, -${MESSAGE_INDEX_MAX + 1})`,
    );
  });
});
