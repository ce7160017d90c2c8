import { expect } from 'chai';
import { sentRecord } from '../test-support.js';
import { devicesFixture } from './device-fixture.js';
import type { DevicesDeps } from './devices.js';
import { SHOWN_TEXT_CHARS, messageViews } from './message-view.js';

/**
 * The admin Devices and Messages pages' reads without an API: the session and pairing records in an
 * in-memory Redis (as the connection service and the senders write them), the message stores and
 * the send queue faked.
 */
describe('messageViews: records as the Messages page shows them (in-memory Redis)', () => {
  let d: DevicesDeps;

  beforeEach(() => {
    ({ d } = devicesFixture());
  });

  it('When records are viewed, then a long text is cut and says so, and a group message names its chat', async () => {
    const long = sentRecord('d-1', {
      text: 'a'.repeat(SHOWN_TEXT_CHARS + 5),
      to: '120363000000000001@g.us',
    } as never);
    const [view] = await messageViews(d, 'd-1', [long]);
    expect((view!.text as string).length).to.equal(SHOWN_TEXT_CHARS);
    expect(view!.textTruncated).to.equal(true);
    expect(view!.chat).to.deep.equal({ type: 'group', id: '120363000000000001@g.us' });
  });
});
