import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import {
  ERRORS,
  GROUP_ERRORS,
  GROUP_INFO_ERRORS,
  GROUP_LIMITS,
  type GroupCommand,
  type GroupDetail,
} from '@mgw/contracts';
import { DeviceCommandResponder } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
  createPoolToken,
} from '../../../../test/helpers/api.js';

/**
 * The group routes against the real app and Redis: validation, the device's state, and what the
 * holder's reply becomes (every answer is checked against the OpenAPI document by `call`). The
 * holder here is a stand-in that answers group commands the way the sender's group-commands.ts
 * does; the whole way through the real client and the simulator is
 * services/sender/test/e2e/groups.test.ts.
 */
describe('Group routes (/groups…)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let holder: Redis | undefined;
  const asked: GroupCommand[] = [];
  const gid = '120363012345678901@g.us';
  const CODE = 'AbCdEfGhIjKlMnOpQrStUv';
  const NEW_CODE = 'ZyXwVuTsRqPoNmLkJiHgFe';
  const detail: GroupDetail = {
    id: gid,
    subject: 'Team',
    size: 2,
    announce: false,
    isAdmin: true,
    locked: false,
    participants: [{ contact: { phone: '15551234567', lid: '123456789012345@lid' }, admin: true }],
  };

  before(async () => {
    t = await startApi();
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    asked.length = 0;
  });
  afterEach(async () => {
    await holder?.quit();
    holder = undefined;
  });
  after(() => t.close());

  async function startHolder(): Promise<void> {
    holder = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    await new DeviceCommandResponder(holder, t.redis).listen(
      async (cmd, reply) => {
        if (!cmd.type.startsWith('group') || cmd.deviceId !== deviceId) return;
        const c = cmd as GroupCommand;
        asked.push(c);
        if (c.type === 'group-get') return reply({ ok: false, error: 'not-found' });
        if (c.type === 'group-update')
          return c.changes.locked
            ? reply({ ok: false, error: 'not-admin' })
            : reply({ ok: true, data: { group: { ...detail, ...c.changes, description: 'Rules' } } });
        if (c.type === 'group-invite')
          return reply({
            ok: true,
            data: {
              invite: {
                id: gid,
                code: c.revoke ? NEW_CODE : CODE,
                link: `https://chat.whatsapp.com/${c.revoke ? NEW_CODE : CODE}`,
              },
            },
          });
        if (c.type === 'group-join')
          return c.code === CODE
            ? reply({ ok: true, data: { group: detail } })
            : reply({ ok: false, error: 'invite-not-found' });
        if (c.type === 'groups-list')
          return reply({
            ok: true,
            data: { groups: [{ id: gid, subject: 'Team', size: 3, announce: false, isAdmin: true }] },
          });
        if (c.type === 'group-participants')
          return reply({
            ok: true,
            data: {
              participants: c.participants.map((p, i) =>
                i === 0
                  ? { participant: p, ok: true }
                  : { participant: p, ok: false, reason: 'not_allowed', code: '403' },
              ),
            },
          });
        return reply({ ok: false, error: 'failed' });
      },
      () => undefined,
    );
  }

  const groups = (path: string, method = 'GET', json?: unknown) =>
    call(`${t.api}/groups${path}`, { method, token, ...(json === undefined ? {} : { json }) });

  it('When the bodies or the id are wrong, then 400 with details and nothing is asked of the holder', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    const cases: [string, string, unknown][] = [
      ['/not-a-group', 'GET', undefined],
      ['/12345@s.whatsapp.net/participants', 'POST', { action: 'add', participants: ['15551234567'] }],
      ['', 'POST', { subject: '   ', participants: ['15551234567'] }],
      ['', 'POST', { subject: 'x'.repeat(GROUP_LIMITS.subject + 1), participants: ['15551234567'] }],
      ['', 'POST', { subject: 'Team', participants: [] }],
      ['', 'POST', { subject: 'Team', participants: ['15551234567', '15551234567'] }],
      ['', 'POST', { subject: 'Team', participants: ['+1 555'] }],
      [
        '',
        'POST',
        { subject: 'Team', participants: Array.from({ length: 51 }, (_, i) => `1555100${1000 + i}`) },
      ],
      [`/${gid}/participants`, 'POST', { action: 'kick', participants: ['15551234567'] }],
      [`/${gid}/participants`, 'POST', { action: 'add', participants: ['abc@lid'] }],
      [`/${gid}`, 'PATCH', {}],
      [`/${gid}`, 'PATCH', { subject: '  ' }],
      [`/${gid}`, 'PATCH', { subject: 'x'.repeat(GROUP_LIMITS.subject + 1) }],
      [`/${gid}`, 'PATCH', { description: 'x'.repeat(2049) }],
      [`/${gid}`, 'PATCH', { announce: 'yes' }],
      [`/${gid}`, 'PATCH', { locked: 1 }],
      [`/${gid}`, 'PATCH', { subject: 'Team', owner: 'me' }],
      ['/not-a-group', 'PATCH', { subject: 'Team' }],
      ['/not-a-group/invite', 'GET', undefined],
      ['/join', 'POST', {}],
      ['/join', 'POST', { code: 'short' }],
      ['/join', 'POST', { code: 'https://evil.example/AbCdEfGhIjKlMnOpQrStUv' }],
      ['/join', 'POST', { code: 'https://chat.whatsapp.com/../AbCdEfGhIjKl' }],
    ];
    for (const [path, method, json] of cases) {
      const res = await groups(path, method, json);
      expect(res.status, `${method} ${path} ${JSON.stringify(json)}`).to.equal(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.details).to.be.an('array').that.is.not.empty;
    }
    expect(asked).to.deep.equal([]);
  });

  it('When the device is not connected, then 409; when it is, the holder answers the list, a change per participant and a 404', async () => {
    expect((await groups('')).status).to.equal(409);
    await markConnected(t.redis, deviceId);
    await startHolder();
    const list = await groups('');
    expect(list.status).to.equal(200);
    expect(list.body).to.deep.equal({
      success: true,
      data: { groups: [{ id: gid, subject: 'Team', size: 3, announce: false, isAdmin: true }] },
    });
    const change = await groups(`/${gid}/participants`, 'POST', {
      action: 'add',
      participants: ['15551234567', '123456789012345@lid'],
    });
    expect(change.status).to.equal(200);
    expect(change.body.data).to.deep.equal({
      id: gid,
      action: 'add',
      participants: [
        { participant: '15551234567', ok: true },
        { participant: '123456789012345@lid', ok: false, reason: 'not_allowed', code: '403' },
      ],
    });
    const missing = await groups(`/${gid}`);
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ success: false, error: GROUP_ERRORS.notFound });
    const failed = await groups(`/${gid}/leave`, 'POST');
    expect(failed.status).to.equal(502);
    expect(asked.map((c) => c.type)).to.deep.equal([
      'groups-list',
      'group-participants',
      'group-get',
      'group-leave',
    ]);
  });

  it('When the subject, settings or invite link are changed or a group is joined by link, then the holder is asked exactly that, and its refusals are 403 and 404', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    const changed = await groups(`/${gid}`, 'PATCH', { subject: 'New', description: '', announce: true });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect((changed.body.data as { group: GroupDetail }).group).to.include({
      subject: 'New',
      announce: true,
      locked: false,
    });
    const refused = await groups(`/${gid}`, 'PATCH', { locked: true });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.equal({ success: false, error: GROUP_INFO_ERRORS.notAdmin });
    const invite = await groups(`/${gid}/invite`);
    expect(invite.body).to.deep.equal({
      success: true,
      data: { invite: { id: gid, code: CODE, link: `https://chat.whatsapp.com/${CODE}` } },
    });
    const revoked = await groups(`/${gid}/invite/revoke`, 'POST');
    expect((revoked.body.data as { invite: { code: string } }).invite.code).to.equal(NEW_CODE);
    const byLink = await groups('/join', 'POST', { code: `https://chat.whatsapp.com/${CODE}` });
    expect(byLink.status, JSON.stringify(byLink.body)).to.equal(200);
    expect((byLink.body.data as { group: GroupDetail }).group.id).to.equal(gid);
    const byCode = await groups('/join', 'POST', { code: CODE });
    expect(byCode.status).to.equal(200);
    const gone = await groups('/join', 'POST', { code: NEW_CODE });
    expect(gone.status).to.equal(404);
    expect(gone.body).to.deep.equal({ success: false, error: GROUP_INFO_ERRORS.inviteNotFound });
    expect(asked.map((c) => ({ ...c, deviceId: undefined, requestId: undefined }))).to.deep.equal(
      [
        { type: 'group-update', groupId: gid, changes: { subject: 'New', description: '', announce: true } },
        { type: 'group-update', groupId: gid, changes: { locked: true } },
        { type: 'group-invite', groupId: gid, revoke: false },
        { type: 'group-invite', groupId: gid, revoke: true },
        { type: 'group-join', code: CODE },
        { type: 'group-join', code: CODE },
        { type: 'group-join', code: NEW_CODE },
      ].map((c) => ({ ...c, deviceId: undefined, requestId: undefined })),
    );
  });

  it('When a pool token asks a group, label or chat-state route, or a method the path does not serve, then 403 and 405', async () => {
    const poolToken = await createPoolToken(t, 'p-groups');
    for (const [path, method] of [
      ['', 'GET'],
      [`/${gid}`, 'PATCH'],
      [`/${gid}/invite`, 'GET'],
      [`/${gid}/invite/revoke`, 'POST'],
      ['/join', 'POST'],
      ['/../labels', 'POST'],
      ['/../chats/15551234567/labels', 'POST'],
      ['/../chats/15551234567/labels/5', 'DELETE'],
      ['/../chats/15551234567', 'PATCH'],
    ] as const) {
      const res = await call(`${t.api}/groups${path}`.replace('/groups/..', ''), {
        method,
        token: poolToken,
        ...(method === 'GET' ? {} : { json: {} }),
      });
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    }
    expect((await groups(`/${gid}/invite`, 'POST')).status).to.equal(405);
    expect((await groups(`/${gid}`, 'DELETE')).status).to.equal(405);
  });
});
