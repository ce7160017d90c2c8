import { expect } from 'chai';
import {
  MAX_SEND_USERNAME_LOOKUPS,
  createMetrics,
  type DeviceCommandReply,
  type SendBody,
} from '@mgw/contracts';
import type { ContactUsernames } from '@mgw/store';
import { MemoryLookupCap, MemoryHolder, said } from '../test-support.js';
import { usernameRecipientDeps, withUsernamesResolved } from './username-recipients.js';

/** A /send naming usernames: resolved from the device's map, or looked up through an in-memory holder. */
describe('withUsernamesResolved: usernames in `to` become their LIDs (an in-memory holder)', () => {
  const deviceId = 'ur-1';
  let mh: MemoryHolder;
  let known: Map<string, string>;
  let deps: ReturnType<typeof usernameRecipientDeps>;

  beforeEach(() => {
    mh = new MemoryHolder();
    known = new Map([['alice.shop', '111@lid']]);
    const usernames = {
      lidsOf: async (_d: string, names: string[]) =>
        new Map(names.flatMap((n) => (known.has(n) ? [[n, known.get(n)!]] : []))),
    } as unknown as ContactUsernames;
    deps = usernameRecipientDeps(
      { holder: mh.holder, cap: new MemoryLookupCap(5, 600), lookups: createMetrics().contactLookups },
      usernames,
    );
  });
  const resolve = (body: Partial<SendBody>) => withUsernamesResolved(deps, deviceId, body as SendBody);
  const answering =
    (...usernames: object[]) =>
    () =>
      ({ ok: true, data: { usernames } }) as DeviceCommandReply;

  it('When no entry names a username, then the body is the same object, nothing asked', async () => {
    const body = { to: ['15550001111'], text: 'Hi' };
    expect(await withUsernamesResolved(deps, deviceId, body as SendBody)).to.equal(body);
    expect(mh.asked).to.deep.equal([]);
  });

  it("When a username is in the device's map, then its LID without a lookup; others are looked up in one command and replace their entries in place", async () => {
    const heard = mh.device(deviceId, answering({ username: 'bob', status: 'found', lid: '222@lid' }));
    expect(await resolve({ to: '@alice.shop', text: 'Hi' })).to.deep.equal({ to: '111@lid', text: 'Hi' });
    expect(heard).to.deep.equal([]);
    expect(await resolve({ to: ['15550001111', '@Bob', '@alice.shop'], text: 'Hi' })).to.deep.equal({
      to: ['15550001111', '222@lid', '111@lid'],
      text: 'Hi',
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-usernames-resolve', deviceId, lookups: [{ username: 'bob' }] },
    ]);
  });

  it('When a username is not found or needs a PIN, then the request is refused naming each entry (pin_required only when all need one)', async () => {
    mh.device(
      deviceId,
      answering({ username: 'carol', status: 'pin_required' }, { username: 'dave', status: 'not_found' }),
    );
    const refused = await resolve({ to: ['@carol', '@dave'], text: 'Hi' });
    expect(refused).to.deep.equal({
      kind: 'refused',
      reason: 'username_unresolved',
      pinRequired: false,
      details: [
        {
          path: ['to', 0],
          message: '@carol: username_pin_required (resolve it with its PIN: POST /contacts/username)',
        },
        { path: ['to', 1], message: '@dave: username_not_found' },
      ],
    });
  });

  it('When the lookup cannot answer, then the refusal says why: rate_limited (the cap), no_device, username_lookup_failed (timed out or not)', async () => {
    const answers: (DeviceCommandReply | undefined)[] = [undefined, { ok: false, error: 'x' }];
    mh.device(deviceId, () => answers.shift());
    expect(await resolve({ to: '@eve', text: 'Hi' })).to.deep.equal({
      kind: 'refused',
      reason: 'username_lookup_failed',
      timedOut: true,
    });
    expect(await resolve({ to: '@eve', text: 'Hi' })).to.deep.equal({
      kind: 'refused',
      reason: 'username_lookup_failed',
      timedOut: false,
    });
    mh.sessions.update(deviceId, 'connecting');
    expect(await resolve({ to: '@eve', text: 'Hi' })).to.deep.equal({ kind: 'refused', reason: 'no_device' });
    const names = ['@user.one', '@user.two', '@user.three', '@user.four'];
    mh.connect(deviceId);
    expect(await resolve({ to: names, text: 'Hi' })).to.deep.equal({
      kind: 'refused',
      reason: 'rate_limited',
      retryAfterMs: 600_000,
    });
  });

  it('When more usernames than the bound are unresolved, or there is no way to resolve them, then invalid and nothing asked', async () => {
    const many = Array.from({ length: MAX_SEND_USERNAME_LOOKUPS + 1 }, (_, i) => `@user${i}`);
    expect(await resolve({ to: many, text: 'Hi' })).to.deep.include({ kind: 'refused', reason: 'invalid' });
    expect(
      await withUsernamesResolved(undefined, deviceId, { to: '@alice.shop', text: 'x' } as SendBody),
    ).to.deep.equal({
      kind: 'refused',
      reason: 'invalid',
      details: [{ path: ['to'], message: 'a username cannot be sent to from here' }],
    });
    expect(mh.asked).to.deep.equal([]);
  });
});

describe('withUsernamesResolved without usernames: no step at all', () => {
  it('When `to` names no username (a phone, a LID, a list of them, personalised entries), then the body comes back as it is, not as a promise', () => {
    const cases: SendBody['to'][] = [
      '15551234567',
      '111@lid',
      ['15551234567', '111@lid'],
      ['15551234567', { phone: '15551234568', vars: { name: 'A' } }],
    ];
    for (const to of cases) {
      const body = { to } as SendBody;
      expect(withUsernamesResolved(undefined, 'ur-1', body), JSON.stringify(to)).to.equal(body);
    }
  });

  it('When `to` names one (alone, in a list), then the step runs (here: refused, no lookup from here)', async () => {
    for (const to of ['@alice.shop', ['15551234567', '@alice.shop']] as SendBody['to'][]) {
      const resolving = withUsernamesResolved(undefined, 'ur-1', { to } as SendBody);
      expect(resolving, JSON.stringify(to)).to.be.instanceOf(Promise);
      expect(await resolving).to.include({ kind: 'refused' });
    }
  });
});
