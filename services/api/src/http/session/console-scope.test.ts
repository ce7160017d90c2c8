import { expect } from 'chai';
import type { Request, Response } from 'express';
import type { WorkspaceRecord } from '@mgw/store';
import { ApiError } from '../api-error.js';
import {
  consoleGuard,
  scopeOfSession,
  scopedMethodNotAllowed,
  type AdminScope,
  type ConsoleAccess,
} from './console-scope.js';

/** The console's guard of one admin route, over faked owners and a request's params: no API, no Redis. */
describe("Console scope: a console session's calls held to its role and its workspace's ids", () => {
  const status = new Map<string, WorkspaceRecord['status']>([
    ['acme', 'active'],
    ['globex', 'active'],
  ]);
  const deps = {
    workspaces: {
      get: async (id: string) =>
        status.has(id) ? ({ id, status: status.get(id) } as WorkspaceRecord) : undefined,
      ownerOf: async (deviceId: string) =>
        deviceId.startsWith('a-') ? 'acme' : deviceId.startsWith('g-') ? 'globex' : 'default',
      poolOwner: async (poolId: string) =>
        poolId === 'acme-pool' ? 'acme' : poolId === 'globex-pool' ? 'globex' : undefined,
    },
  };
  const admin: AdminScope = { workspace: 'acme', role: 'admin', user: 'ann' };
  const agent: AdminScope = { workspace: 'acme', role: 'agent', user: 'bob' };

  /** What the guard passes on: nothing (next()), or the error's status and message. */
  const run = async (
    access: ConsoleAccess | undefined,
    scope: AdminScope | undefined,
    params: Record<string, string> = {},
  ) => {
    const res = { locals: scope ? { adminScope: scope } : {} } as unknown as Response;
    let passed: unknown = 'not called';
    await consoleGuard(access, deps)(
      { params } as unknown as Request,
      res,
      (err?: unknown) => (passed = err),
    );
    return passed instanceof ApiError ? `${passed.status} ${passed.message}` : passed;
  };

  it('When the operator calls (no scope), then every route passes, its own included', async () => {
    expect(await run(undefined, undefined, { deviceId: 'g-1' })).to.equal(undefined);
    expect(await run('admin', undefined, { workspaceId: 'globex' })).to.equal(undefined);
  });

  it("When a console session calls an operator's route, then 404 Not found; a session route passes", async () => {
    expect(await run(undefined, admin)).to.equal('404 Not found');
    expect(await run('session', agent)).to.equal(undefined);
  });

  it("When an agent calls an admin's route, then 403 before its ids are looked at; a read or a chat passes for its own device", async () => {
    expect(await run('admin', agent, { deviceId: 'g-1' })).to.equal('403 Your role cannot do this');
    expect(await run('admin', agent, { deviceId: 'a-1' })).to.equal('403 Your role cannot do this');
    expect(await run('chat', agent, { deviceId: 'a-1' })).to.equal(undefined);
    expect(await run('read', agent, { deviceId: 'a-1' })).to.equal(undefined);
  });

  it("When the path names another workspace's id or one nobody has, then 404 as for none: workspace, device, pool", async () => {
    for (const [params, error] of [
      [{ workspaceId: 'globex' }, '404 Workspace not found'],
      [{ workspaceId: 'nobody' }, '404 Workspace not found'],
      [{ deviceId: 'g-1' }, '404 Device not found'],
      [{ deviceId: 'nobody-has-it' }, '404 Device not found'],
      [{ deviceId: 'NOT AN ID' }, '404 Device not found'],
      [{ poolId: 'globex-pool' }, '404 Pool not found'],
      [{ poolId: 'no-pool' }, '404 Pool not found'],
    ] as const)
      expect(await run('read', admin, params), JSON.stringify(params)).to.equal(error);
    expect(await run('admin', admin, { workspaceId: 'acme', deviceId: 'a-1', poolId: 'acme-pool' })).to.equal(
      undefined,
    );
    // default's console owns every device no workspace names.
    expect(
      await run('read', { workspace: 'default', role: 'admin' }, { deviceId: 'nobody-has-it' }),
    ).to.equal(undefined);
  });

  it("When a user's workspace is suspended, then 403; the operator viewing it passes", async () => {
    status.set('acme', 'suspended');
    try {
      expect(await run('read', agent, { deviceId: 'a-1' })).to.equal('403 This workspace is suspended');
      expect(
        await run('read', { workspace: 'acme', role: 'admin', viewing: true }, { deviceId: 'a-1' }),
      ).to.equal(undefined);
    } finally {
      status.set('acme', 'active');
    }
  });

  it("When a session's scope is read, then a user's workspace and role, the operator viewing as the admin, or none", () => {
    const base = { csrfToken: 'c', createdAt: '', expiresAt: '' };
    expect(scopeOfSession({ ...base, role: 'operator' })).to.equal(undefined);
    expect(scopeOfSession({ ...base, role: 'operator', workspace: 'acme' })).to.deep.equal({
      workspace: 'acme',
      role: 'admin',
      viewing: true,
    });
    expect(
      scopeOfSession({ ...base, role: 'agent', workspace: 'acme', user: 'bob', stamp: 's' }),
    ).to.deep.equal({
      workspace: 'acme',
      role: 'agent',
      user: 'bob',
    });
  });

  it('When a known path is called with a method it lacks, then 405 naming the methods the caller may use; none: 404', () => {
    const answer = (scope: AdminScope | undefined, visible: string | undefined) => {
      const headers: Record<string, string> = {};
      const res = {
        locals: scope ? { adminScope: scope } : {},
        setHeader: (k: string, v: string) => (headers[k] = v),
      };
      let err: unknown;
      scopedMethodNotAllowed('GET, HEAD, PUT, DELETE', visible)(
        {} as Request,
        res as unknown as Response,
        (e?: unknown) => (err = e),
      );
      return `${(err as ApiError).status} ${headers.Allow ?? ''}`.trim();
    };
    expect(answer(undefined, undefined)).to.equal('405 GET, HEAD, PUT, DELETE');
    expect(answer(admin, 'GET, HEAD')).to.equal('405 GET, HEAD');
    expect(answer(admin, undefined)).to.equal('404');
  });
});
