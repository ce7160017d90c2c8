import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { REPO_ROOT, useSharedStack, waitFor } from '../src/index.js';

/** Alive and not a zombie. */
const isRunning = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** What the first suite left: its view of the stack, read by the suites after it. */
let first: { apiUrl: string; pids: (number | undefined)[]; deviceId: string; token: string };
const phone = '15559300001';

describe('testing: suites on one shared stack (useSharedStack), each with a device of its own', function () {
  this.timeout(180_000);

  describe('the first suite', function () {
    const stack = useSharedStack();

    it('When a suite takes the shared stack, then it has a fresh device of its own and links it', async () => {
      const s = stack();
      expect(s.deviceId).to.match(/^e2e-[0-9a-f]{8}$/);
      expect((await s.api('GET', '/status')).body).to.include({ status: 'disconnected' });
      await s.linkByQr(phone, 'Shared One');
      first = {
        apiUrl: s.apiUrl,
        pids: s.processes.map((p) => p.child.pid),
        deviceId: s.deviceId,
        token: s.token,
      };
    });
  });

  describe('a second suite with the same options', function () {
    const stack = useSharedStack();

    it('When the next suite takes it, then the processes are the same, its device is another, and the first suite’s device was logged out', async () => {
      const s = stack();
      expect(s.apiUrl).to.equal(first.apiUrl);
      expect(s.processes.map((p) => p.child.pid)).to.deep.equal(first.pids);
      expect(s.deviceId).to.not.equal(first.deviceId);
      expect(s.token).to.not.equal(first.token);
      expect(await s.redis.smembers(keys.linkedDevices())).to.deep.equal([]);
      expect(await s.redis.exists(keys.lease(first.deviceId))).to.equal(0);
      expect((await s.api('GET', '/status', undefined, first.token)).body).to.include({
        status: 'disconnected',
      });
      expect((await s.simApi<{ devices: unknown[] }>('GET', `/devices/${phone}`)).devices).to.deep.equal([]);
      expect((await s.api('GET', '/status')).body).to.include({ status: 'disconnected' });
    });
  });

  describe('a suite with other options', function () {
    const stack = useSharedStack({ senders: 0 });

    it('When a suite asks for other options, then the stack before is stopped and it gets one of its own', async () => {
      const s = stack();
      expect(s.apiUrl).to.not.equal(first.apiUrl);
      expect(s.senders()).to.deep.equal([]);
      await waitFor(() => first.pids.every((pid) => pid === undefined || !isRunning(pid)), {
        timeoutMs: 10_000,
        what: 'the first stack’s processes gone',
      });
    });
  });
});

describe('testing: a worker’s shared stack stops with the worker (mocha --parallel)', function () {
  this.timeout(180_000);

  it('When a parallel run ends with its worker’s shared stack running, then every process of it is gone by the time mocha exits', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-shared-run-'));
    const pidsFile = path.join(dir, 'pids.json');
    try {
      const child = spawn(
        process.execPath,
        [
          path.join(REPO_ROOT, 'node_modules/mocha/bin/mocha.js'),
          '--parallel',
          // 2: with 1 mocha runs the file in its own process, no worker
          '--jobs',
          '2',
          'libs/testing/test/fixtures/shared-stack-suite.ts',
        ],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, REDIS_URL: '', MGW_SHARED_PIDS_FILE: pidsFile },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, out).to.equal(0);
      const { pids, run } = JSON.parse(readFileSync(pidsFile, 'utf8')) as { pids: number[]; run: number };
      expect(pids, 'api, connection and sender').to.have.length(3);
      expect(
        pids.filter((pid) => isRunning(pid)),
        'still running once mocha exited',
      ).to.deep.equal([]);
      expect(
        existsSync(path.join(os.tmpdir(), `mgw-shared-stacks-${run}`)),
        'the run’s list removed',
      ).to.equal(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
