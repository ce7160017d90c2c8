import { expect } from 'chai';
import { ERRORS, GROUP_ERRORS } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

const ADMIN_TOKEN = 'admin-groups-test-token-0123456789abcdef';
const PASSWORD = 'admin groups password 7';

type Json = Record<string, unknown>;
interface SimGroupView {
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
  participants: { phone: string; lid: string; role: 'member' | 'admin' | 'superadmin' }[];
}
interface Detail {
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
  isAdmin: boolean;
  size: number;
  participants: { contact: { phone?: string; lid?: string }; admin: boolean }[];
}
interface Outcome {
  participant: string;
  ok: boolean;
  reason?: string;
}

const paths = (body: Json) =>
  ((body.details ?? []) as { path: (string | number)[] }[]).map((d) => d.path.join('.'));

/**
 * The admin group routes (the dashboard's Groups tab) against the whole stack and the simulator:
 * each is the public group route with the device named by the path, so a change made here is what
 * the public API reads back and what the simulator's group holds.
 */
describe('Admin API: a device’s groups (/devices/:deviceId/groups…), as the public /groups routes (whole stack, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({
    allInOne: true,
    env: { ADMIN_API_TOKEN: ADMIN_TOKEN, ADMIN_PASSWORD: PASSWORD, RATE_LIMIT_GROUPS: '1000' },
  });
  const account = '15552710001';
  const [ana, ben, cai, dee] = ['15552710011', '15552710012', '15552710013', '15552710014'];
  let gid = '';

  before(async () => {
    await stack().linkByQr(account, 'Groups Admin');
  });

  const admin = <T = Json>(method: string, path: string, body?: unknown) =>
    stack().adminApi<T>(ADMIN_TOKEN, method, `/devices/${stack().deviceId}/groups${path}`, body);
  const pub = <T = Json>(method: string, path: string, body?: unknown) =>
    stack().api<T>(method, `/groups${path}`, body);
  const simGroup = (id: string) => stack().simApi<SimGroupView>('GET', `/groups/${id}`);
  const roleOf = (g: SimGroupView, phone: string) => g.participants.find((p) => p.phone === phone)?.role;

  it('When the operator creates a group with two contacts, then the public API lists it and the simulator’s group has them, the account its creator', async () => {
    const res = await admin<{ success: boolean; data: { group: Detail; participants: Outcome[] } }>(
      'POST',
      '',
      { subject: 'Ops team', participants: [ana, ben] },
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data.participants.map((p) => [p.participant, p.ok])).to.deep.equal([
      [ana, true],
      [ben, true],
    ]);
    gid = res.body.data.group.id;
    expect(gid).to.match(/@g\.us$/);

    const sim = await simGroup(gid);
    expect(sim.subject).to.equal('Ops team');
    expect(sim.participants.map((p) => p.phone).sort()).to.deep.equal([account, ana, ben].sort());
    expect(roleOf(sim, account)).to.equal('superadmin');

    const list = await pub<{ data: { groups: Json[] } }>('GET', '');
    expect(list.status).to.equal(200);
    expect(list.body.data.groups).to.deep.include({
      id: gid,
      subject: 'Ops team',
      size: 3,
      announce: false,
      isAdmin: true,
    });
    // The admin list is the same answer.
    const adminList = await admin('GET', '');
    expect(adminList.status).to.equal(200);
    expect(adminList.body).to.deep.equal(list.body);
  });

  it('When the operator changes the subject, description and settings, then the simulator’s group and the public read show them', async () => {
    const res = await admin<{ data: { group: Detail } }>('PATCH', `/${gid}`, {
      subject: 'Ops team (on call)',
      description: 'Rota and incidents',
      announce: true,
      locked: true,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.group).to.include({
      subject: 'Ops team (on call)',
      description: 'Rota and incidents',
      announce: true,
      locked: true,
    });
    const sim = await simGroup(gid);
    expect(sim).to.include({
      subject: 'Ops team (on call)',
      description: 'Rota and incidents',
      announce: true,
      locked: true,
    });
    const read = await pub<{ data: { group: Detail } }>('GET', `/${gid}`);
    expect(read.body.data.group).to.include({
      subject: 'Ops team (on call)',
      description: 'Rota and incidents',
    });
    // "" removes the description.
    expect((await admin('PATCH', `/${gid}`, { description: '' })).status).to.equal(200);
    expect((await simGroup(gid)).description).to.equal(undefined);
  });

  it('When the operator adds, promotes, demotes and removes members, then each answer says ok and the simulator’s roles follow', async () => {
    const change = async (action: string, participants: string[]) => {
      const res = await admin<{ data: { action: string; participants: Outcome[] } }>(
        'POST',
        `/${gid}/participants`,
        { action, participants },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.action).to.equal(action);
      expect(res.body.data.participants.map((p) => [p.participant, p.ok])).to.deep.equal(
        participants.map((p) => [p, true]),
      );
    };
    await change('add', [cai]);
    expect(roleOf(await simGroup(gid), cai)).to.equal('member');
    await change('promote', [ana]);
    expect(roleOf(await simGroup(gid), ana)).to.equal('admin');
    await change('demote', [ana]);
    expect(roleOf(await simGroup(gid), ana)).to.equal('member');
    await change('remove', [ben]);
    expect(roleOf(await simGroup(gid), ben)).to.equal(undefined);
    await waitFor(
      async () => {
        const read = await pub<{ data: { group: Detail } }>('GET', `/${gid}`);
        const phones = read.body.data.group.participants.map((p) => p.contact.phone).sort();
        return JSON.stringify(phones) === JSON.stringify([account, ana, cai].sort());
      },
      { timeoutMs: 15_000, what: 'the public read shows the members' },
    );
  });

  it('When the operator reads and revokes the invite link, then a contact joins by it and the old one stops working; the account joins another group by link', async () => {
    const first = await admin<{ data: { invite: { id: string; code: string; link: string } } }>(
      'GET',
      `/${gid}/invite`,
    );
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const { code } = first.body.data.invite;
    expect(first.body.data.invite).to.deep.equal({
      id: gid,
      code,
      link: `https://chat.whatsapp.com/${code}`,
    });
    // The public read names the same link.
    expect(
      (await pub<{ data: { invite: { code: string } } }>('GET', `/${gid}/invite`)).body.data.invite.code,
    ).to.equal(code);
    await stack().simApi('POST', '/groups/join', { phone: dee, code });
    expect(roleOf(await simGroup(gid), dee)).to.equal('member');

    const revoked = await admin<{ data: { invite: { code: string } } }>('POST', `/${gid}/invite/revoke`);
    expect(revoked.status).to.equal(200);
    expect(revoked.body.data.invite.code).not.to.equal(code);
    let refused = '';
    await stack()
      .simApi('POST', '/groups/join', { phone: ben, code })
      .catch((err: Error) => (refused = err.message));
    expect(refused).to.include('410');

    const theirs = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Their club',
      members: [ana, cai],
    });
    const link = await stack().simApi<{ code: string }>('POST', `/groups/${theirs.id}/invite`, { by: ana });
    const joined = await admin<{ data: { group: Detail } }>('POST', '/join', {
      code: `https://chat.whatsapp.com/${link.code}`,
    });
    expect(joined.status, JSON.stringify(joined.body)).to.equal(200);
    expect(joined.body.data.group).to.include({ id: theirs.id, subject: 'Their club', isAdmin: false });
    expect(roleOf(await simGroup(theirs.id), account)).to.equal('member');
    // A revoked code is the public route's 404.
    const old = await admin('POST', '/join', { code });
    expect(old.status).to.equal(404);
    expect(old.body).to.deep.equal(await pub('POST', '/join', { code }).then((r) => r.body));
  });

  it('When the operator leaves a group, then the simulator’s group no longer has the account and the public read is 404', async () => {
    const res = await admin('POST', `/${gid}/leave`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, data: { id: gid, left: true } });
    expect(roleOf(await simGroup(gid), account)).to.equal(undefined);
    await waitFor(async () => (await pub('GET', `/${gid}`)).status === 404, {
      timeoutMs: 15_000,
      what: 'the public read to be 404',
    });
    expect((await pub('GET', `/${gid}`)).body).to.deep.equal({
      success: false,
      error: GROUP_ERRORS.notFound,
    });
    const list = await admin<{ data: { groups: { id: string }[] } }>('GET', '');
    expect(list.body.data.groups.map((g) => g.id)).not.to.include(gid);
  });

  it('When an id or a body is wrong, then 400 naming it (the device id first) and nothing changes', async () => {
    const bad = await stack().adminApi(ADMIN_TOKEN, 'GET', '/devices/Not!A-Device/groups/nope');
    expect(bad.status).to.equal(400);
    expect(paths(bad.body)).to.deep.equal(['deviceId']);
    const cases: [string, string, unknown][] = [
      ['GET', '/not-a-group', undefined],
      ['PATCH', '/not-a-group', { subject: 'x' }],
      ['GET', '/12345@s.whatsapp.net/invite', undefined],
      ['POST', '/not-a-group/leave', undefined],
      ['POST', '', { subject: '  ', participants: [ana] }],
      ['POST', '', { subject: 'Team', participants: [] }],
      ['POST', '/120363012345678901@g.us/participants', { action: 'kick', participants: [ana] }],
      ['PATCH', '/120363012345678901@g.us', {}],
      ['POST', '/join', { code: 'https://evil.example/AbCdEfGhIjKlMnOpQrStUv' }],
    ];
    for (const [method, path, body] of cases) {
      const res = await admin(method, path, body);
      const what = `${method} ${path} ${JSON.stringify(body)}`;
      expect(res.status, what).to.equal(400);
      expect(res.body.error, what).to.equal(ERRORS.invalidRequest);
      // The same refusal as the public route's.
      expect(res.body, what).to.deep.equal((await pub(method, path, body)).body);
    }
    // A body where none is taken, and an oversized one.
    const withBody = await admin('POST', `/${gid}/invite/revoke`, { x: 1 });
    expect(withBody.status).to.equal(400);
    const huge = await admin('POST', '', { subject: 'x'.repeat(9000), participants: [ana] });
    expect(huge.status).to.equal(413);
    expect(huge.body).to.deep.equal({ success: false, error: GROUP_ERRORS.bodyTooLarge });
  });

  it('When the device is not linked, then the answer is the public route’s (409 no device)', async () => {
    const other = `t-groups-${Date.now().toString(36)}`;
    const token = await stack().createToken(other);
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['POST', '', { subject: 'Nobody', participants: [ana] }],
      ['GET', '/120363012345678901@g.us', undefined],
    ] as [string, string, unknown][]) {
      const res = await stack().adminApi(ADMIN_TOKEN, method, `/devices/${other}/groups${path}`, body);
      const publicRes = await stack().api(method, `/groups${path}`, body, token);
      expect(publicRes.status).to.equal(409);
      expect(res.status, `${method} ${path}`).to.equal(409);
      expect(res.body).to.deep.equal(publicRes.body);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.noDevice });
    }
  });

  it('When a dashboard session changes a group without its CSRF token, or nobody is signed in, then 403 or 401 and nothing is asked', async () => {
    const url = `${stack().apiUrl}/api/admin/v1`;
    const signIn = await fetch(`${url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(signIn.status).to.equal(200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const path = `${url}/devices/${stack().deviceId}/groups`;
    const noCsrf = await fetch(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'No CSRF', participants: [ana] }),
    });
    expect(noCsrf.status).to.equal(403);
    expect((await fetch(path)).status).to.equal(401);
    const list = await pub<{ data: { groups: { subject: string }[] } }>('GET', '');
    expect(list.body.data.groups.map((g) => g.subject)).not.to.include('No CSRF');
    // The session reads (a GET needs no CSRF token).
    expect((await fetch(path, { headers: { cookie } })).status).to.equal(200);
  });
});
