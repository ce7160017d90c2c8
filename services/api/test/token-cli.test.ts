import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { call, startApi, type TestApi } from './helpers/api.js';
import { lastLine, tokenCli as token } from './helpers/cli.js';

describe('token CLI', function () {
  this.timeout(60_000);
  let t: TestApi;
  before(async () => (t = await startApi()));
  after(async () => t.close());

  it('When a token is created, then its value is the last line of stdout, it authenticates, list never shows it, and revoke makes it fail with 401', async () => {
    const created = await token('create', '--name', 'ci deploy', '--device', 'shop-1');
    expect(created.code).to.equal(0);
    const value = lastLine(created.stdout);
    expect(value).to.match(/^mgw_[A-Za-z0-9_-]{43}$/);
    const id = /tok_[0-9a-f]{12}/.exec(created.stdout)?.[0];
    expect(id).to.be.a('string');

    const status = await call(`${t.api}/status`, { token: value });
    expect(status.status).to.equal(200);

    // Its use is noted in the background (at most once a minute): LAST USED shows it.
    let listed = await token('list');
    await waitFor(
      async () =>
        /ci deploy\s+shop-1\s+\S+Z\s+\S+Z\s+never\s+no$/.test(
          (listed = await token('list')).stdout.split('\n').find((l) => l.startsWith(id!)) ?? '',
        ),
      { timeoutMs: 10_000, what: 'LAST USED set by the /status call' },
    );
    expect(listed.code).to.equal(0);
    expect(listed.stdout.split('\n')[0]).to.match(
      /^ID\s+NAME\s+DEVICE\/POOL\s+CREATED\s+LAST USED\s+EXPIRES\s+EXPIRED$/,
    );
    expect(listed.stdout).not.to.include(value);
    const { hashToken } = await import('@mgw/store');
    expect(listed.stdout).not.to.include(hashToken(value));

    const revoked = await token('revoke', id!);
    expect(revoked.code).to.equal(0);
    const after = await call(`${t.api}/status`, { token: value });
    expect(after.status).to.equal(401);
    expect(after.body).to.deep.equal({ success: false, error: 'Invalid API token' });
    expect((await token('list')).stdout).not.to.include(id!);
  });

  it('When a token created with --expires-in has expired, then it fails with 401 and list marks it expired', async () => {
    const created = await token('create', '--name', 'short', '--expires-in', '1s');
    expect(created.code).to.equal(0);
    const value = lastLine(created.stdout);
    const expiresAt = /expires: (\S+)\)/.exec(created.stdout)?.[1];
    expect(Date.parse(expiresAt!) - Date.now()).to.be.lessThan(1000);
    // Wait until the expiry instant has passed (the outcome after it cannot change).
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(expiresAt!) - Date.now()) + 20));

    const res = await call(`${t.api}/status`, { token: value });
    expect(res.status).to.equal(401);
    const id = /tok_[0-9a-f]{12}/.exec(created.stdout)![0];
    const row = (await token('list')).stdout.split('\n').find((l) => l.startsWith(id));
    // Never used: the only call was refused.
    expect(row).to.match(/short\s+\(default\)\s+\S+\s+never\s+\S+\s+yes$/);
  });

  it('When the arguments are wrong, then a clear error on stderr and a non-zero exit', async () => {
    const [unknown, noName, badExpiry, badDevice, noId, revokeMissing] = await Promise.all([
      token('rotate'),
      token('create'),
      token('create', '--name', 'x', '--expires-in', '30x'),
      token('create', '--name', 'x', '--device', 'Bad Device!'),
      token('revoke'),
      token('revoke', 'tok_000000000000'),
    ]);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.include('unknown command: rotate');
    expect(noName.code).to.not.equal(0);
    expect(noName.stderr).to.include('--name is required');
    expect(badExpiry.code).to.not.equal(0);
    expect(badExpiry.stderr).to.include('--expires-in must be a positive number followed by s, m, h or d');
    expect(badDevice.code).to.not.equal(0);
    expect(badDevice.stderr).to.include('--device must be a device id');
    expect(noId.code).to.not.equal(0);
    expect(noId.stderr).to.include('revoke takes exactly one token id');
    expect(revokeMissing.code).to.equal(1);
    expect(revokeMissing.stderr).to.include('no token with id tok_000000000000');
    for (const r of [unknown, noName, badExpiry, badDevice, noId]) expect(r.stdout).to.equal('');
  });

  it('When a token is created with --workspace, then it is a workspace token acting on the devices of that workspace only; an unknown workspace or a device of another is refused', async () => {
    const ws = `cli${process.pid}`;
    await t.services.workspaces.create({ id: ws, name: 'CLI customer' });
    const device = `cli-d${process.pid}`;
    expect(await t.services.workspaces.addDevice(ws, device)).to.equal('added');
    const made = await token('create', '--name', 'customer', '--workspace', ws);
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stdout).to.include(`every device of workspace ${ws}`);
    const value = lastLine(made.stdout);
    expect((await call(`${t.api}/devices`, { token: value })).status).to.equal(200);
    expect((await call(`${t.api}/devices/${device}/status`, { token: value })).status).to.equal(200);
    expect(
      (await call(`${t.api}/devices/${t.config.defaultDeviceId}/status`, { token: value })).status,
    ).to.equal(404);
    const id = /Created token (tok_[0-9a-f]+)/.exec(made.stdout)![1]!;
    const row = (await token('list')).stdout.split('\n').find((l) => l.startsWith(id));
    expect(row).to.include(`workspace:${ws}`);
    const [unknown, foreign] = await Promise.all([
      token('create', '--name', 'x', '--workspace', 'no-such-workspace'),
      token('create', '--name', 'x', '--workspace', ws, '--device', t.config.defaultDeviceId),
    ]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('no workspace with id no-such-workspace');
    expect(foreign.code).to.equal(1);
    expect(foreign.stderr).to.include(`is not a device of workspace ${ws}`);
  });
});
