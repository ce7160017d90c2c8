import { expect } from 'chai';
import { EVENT_TYPES } from '@mgw/contracts';
import { WEBHOOK_EVENTS } from '../../src/kit/events.js';

describe('console: the event types the pages offer (src/kit/events.ts)', () => {
  it('When the contract gains or renames an event type, then the console’s copy (it runs in the browser, without @mgw/contracts) fails here, in the fast lane', () => {
    expect([...WEBHOOK_EVENTS]).to.deep.equal([...EVENT_TYPES]);
  });
});
