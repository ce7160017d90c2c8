import { expect } from 'chai';
import type { ConsoleRole, ConsoleUserRecord, WorkspaceRecord } from '@mgw/store';
import { addUser, changeUser, listUsers, removeUser, userView, type UsersDeps } from './users.js';

/**
 * A workspace's console users over an in-memory user store (the store's writes are scripts: faked as
 * the narrow interface the use cases take) and a KDF that only tags the password: no Redis, no scrypt.
 */
describe("Console users: a workspace's users listed, added, changed and removed (in memory)", () => {
  let records: Map<string, ConsoleUserRecord>;
  let ended: string[];
  let hashed: number;
  let deps: UsersDeps;
  const workspace = (id: string): WorkspaceRecord => ({
    id,
    name: id,
    status: 'active',
    quotas: {},
    createdAt: '2026-11-28T00:00:00.000Z',
    updatedAt: '2026-11-28T00:00:00.000Z',
  });
  const workspaces = new Map([
    ['acme', workspace('acme')],
    ['globex', workspace('globex')],
  ]);
  let stamps = 0;
  const record = (user: string, ws: string, role: ConsoleRole, password: string): ConsoleUserRecord => ({
    user,
    workspace: ws,
    role,
    password,
    stamp: `s${stamps++}`,
    createdAt: '2026-11-28T00:00:00.000Z',
    updatedAt: '2026-11-28T00:00:00.000Z',
  });

  beforeEach(() => {
    records = new Map();
    ended = [];
    hashed = 0;
    deps = {
      users: {
        create: async (input) => {
          if (records.has(input.user)) return 'taken';
          const made = record(input.user, input.workspace, input.role, input.password);
          records.set(input.user, made);
          return made;
        },
        get: async (user) => records.get(user),
        list: async (ws) => [...records.values()].filter((r) => r.workspace === ws),
        update: async (user, change) => {
          const current = records.get(user);
          if (!current) return undefined;
          const next = {
            ...current,
            ...change,
            stamp: `s${stamps++}`,
            updatedAt: '2026-11-29T00:00:00.000Z',
          };
          records.set(user, next);
          return next;
        },
        delete: async (user) => {
          const current = records.get(user);
          records.delete(user);
          if (current) ended.push(user);
          return current;
        },
        endSessions: async (user) => (ended.push(user), 1),
      },
      passwords: { hash: async (p) => (hashed++, `hashed:${p.length}`) },
      workspaces: { get: async (id) => workspaces.get(id) },
      maxUsers: 100,
    };
  });

  it('When a user is added, then its password is kept only hashed, its view never shows it, and it is listed in its workspace only', async () => {
    const made = await addUser(deps, 'acme', {
      user: 'ann@acme.test',
      password: 'a long password!',
      role: 'admin',
    });
    expect(made).to.deep.equal({
      user: 'ann@acme.test',
      workspace: 'acme',
      role: 'admin',
      createdAt: '2026-11-28T00:00:00.000Z',
      updatedAt: '2026-11-28T00:00:00.000Z',
    });
    expect(records.get('ann@acme.test')!.password).to.equal('hashed:16');
    expect(JSON.stringify(await listUsers(deps, 'acme'))).not.to.include('hashed');
    expect((await listUsers(deps, 'acme')).map((u) => u.user)).to.deep.equal(['ann@acme.test']);
    expect(await listUsers(deps, 'globex')).to.deep.equal([]);
    expect(userView(records.get('ann@acme.test')!)).not.to.have.property('password');
  });

  it('When a name is taken in any workspace, then adding it is refused without hashing; a workspace nobody has is no_workspace', async () => {
    await addUser(deps, 'acme', { user: 'ann', password: 'a long password!', role: 'admin' });
    expect(hashed).to.equal(1);
    expect(
      await addUser(deps, 'globex', { user: 'ann', password: 'another password', role: 'agent' }),
    ).to.equal('taken');
    expect(
      await addUser(deps, 'acme', { user: 'ann', password: 'another password', role: 'agent' }),
    ).to.equal('taken');
    expect(hashed, 'no hash for a taken name').to.equal(1);
    expect(
      await addUser(deps, 'nobody', { user: 'bob', password: 'a long password!', role: 'agent' }),
    ).to.equal('no_workspace');
  });

  it("When a user's password or role is changed, then its sessions end; another workspace's user is not_found as a name nobody has", async () => {
    await addUser(deps, 'acme', { user: 'ann', password: 'a long password!', role: 'admin' });
    await addUser(deps, 'globex', { user: 'gus', password: 'a long password!', role: 'admin' });
    const before = records.get('ann')!.stamp;
    const changed = await changeUser(deps, 'acme', 'ann', { role: 'agent' }, {});
    expect(changed).to.deep.include({ user: 'ann', role: 'agent' });
    expect(records.get('ann')!.stamp).not.to.equal(before);
    expect(ended).to.deep.equal(['ann']);
    await changeUser(deps, 'acme', 'ann', { password: 'a new long password' }, {});
    expect(records.get('ann')!.password).to.equal('hashed:19');
    expect(ended).to.deep.equal(['ann', 'ann']);
    expect(await changeUser(deps, 'acme', 'gus', { role: 'agent' }, {})).to.equal('not_found');
    expect(await changeUser(deps, 'acme', 'nobody', { role: 'agent' }, {})).to.equal('not_found');
    expect(records.get('gus')!.role, "globex's user untouched").to.equal('admin');
  });

  it('When a workspace admin changes itself, then its own password it may, its own role not; the operator may change anyone', async () => {
    await addUser(deps, 'acme', { user: 'ann', password: 'a long password!', role: 'admin' });
    const me = { user: 'ann' };
    expect(await changeUser(deps, 'acme', 'ann', { role: 'agent' }, me)).to.equal('own_user');
    expect(
      await changeUser(deps, 'acme', 'ann', { role: 'admin' }, me),
      'the same role: no change of it',
    ).to.deep.include({ role: 'admin' });
    expect(await changeUser(deps, 'acme', 'ann', { password: 'my new password!' }, me)).to.deep.include({
      role: 'admin',
    });
    expect(await changeUser(deps, 'acme', 'ann', { role: 'agent' }, {})).to.deep.include({ role: 'agent' });
  });

  it('When a user is removed, then its sessions end; itself it may not remove, another workspace cannot remove it, the operator can', async () => {
    await addUser(deps, 'acme', { user: 'ann', password: 'a long password!', role: 'admin' });
    await addUser(deps, 'acme', { user: 'bob', password: 'a long password!', role: 'agent' });
    expect(await removeUser(deps, 'acme', 'ann', { user: 'ann' })).to.equal('own_user');
    expect(await removeUser(deps, 'globex', 'bob', {})).to.equal('not_found');
    expect(await removeUser(deps, 'acme', 'bob', { user: 'ann' })).to.equal('removed');
    expect(ended).to.deep.equal(['bob']);
    expect(await removeUser(deps, 'acme', 'bob', {})).to.equal('not_found');
    expect(await removeUser(deps, 'acme', 'ann', {})).to.equal('removed');
    expect(await listUsers(deps, 'acme')).to.deep.equal([]);
  });
});
