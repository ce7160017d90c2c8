/**
 * What a status update costs the sending client per viewer, against what a group message costs per
 * member: one Baileys socket posts to the same N contacts as a status (`status@broadcast` with
 * `statusJidList`) and as a group message. Both are one `skmsg` plus sender-key copies; Baileys
 * remembers which group members hold its key (later group messages carry no copies) but keeps no
 * such memory for statuses, so every status carries N copies. The simulator runs in its own
 * process, so the client's time is measured apart from the server's. Prints ms per viewer/member
 * and the ratio status / group.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import QRCode from 'qrcode';
import type { SimulatorInfo } from '../src/index.js';
import { TestDevice } from '@mgw/testing';

const AUDIENCE = Number(process.env.BENCH_AUDIENCE ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ACCOUNT = '15559980001';
const contacts = Array.from({ length: AUDIENCE }, (_, i) => String(15559981000 + i));
const jids = contacts.map((p) => `${p}@s.whatsapp.net`);

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', cli], {
  env: { ...process.env, SANDBOX_PORT: '0' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const controlUrl = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match) resolve(match[1]!);
  });
  child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  setTimeout(() => reject(new Error('simulator did not start')), 60_000).unref();
});

const api = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${controlUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
};

/** Milliseconds of `work`. */
const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
};
let sentToGroup = 0;
/**
 * Waits until the simulator is idle again (its phones decrypted what was sent), so one send's
 * measure does not include the server's work on the previous one: every status read by all its
 * viewers, and the last member's phone holding every group message sent so far.
 */
const settled = async (): Promise<void> => {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const { statuses } = (await api('GET', `/statuses/${ACCOUNT}`)) as { statuses: { readBy: string[] }[] };
    const inbox = (await api('GET', `/inbox/${contacts.at(-1)!}`)).messages as { groupId?: string }[];
    const read = statuses.every((s) => s.readBy.length === AUDIENCE);
    if (read && inbox.filter((m) => m.groupId).length >= sentToGroup) return;
    await new Promise((r) => setTimeout(r, 100));
  }
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const info = (await api('GET', '/info')) as unknown as SimulatorInfo;
  const device = new TestDevice(info);
  device.connect();
  const qr = await device.nextQr();
  const opened = device.waitForOpen(60_000);
  await api('POST', '/phone/link', { qr: await QRCode.toDataURL(qr), phone: ACCOUNT, name: 'Bench' });
  await opened;
  const sock = device.sock!;
  const group = (await api('POST', '/groups', { subject: 'Bench', members: [ACCOUNT, ...contacts] })) as {
    id: string;
  };

  // Warm-up, not measured: device lists and a Signal session with every contact (a status opens
  // them), and the group's first message (it hands the key to every member once).
  await sock.sendMessage('status@broadcast', { text: 'warm-up' }, { statusJidList: jids });
  await settled();
  const groupFirst = await timed(() => sock.sendMessage(group.id, { text: 'first group message' }));
  sentToGroup++;

  await settled();
  const status: number[] = [];
  const grouped: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    status.push(
      await timed(() =>
        sock.sendMessage('status@broadcast', { text: `status ${i}` }, { statusJidList: jids }),
      ),
    );
    await settled();
    grouped.push(await timed(() => sock.sendMessage(group.id, { text: `group ${i}` })));
    sentToGroup++;
    await settled();
  }
  const perViewer = median(status) / AUDIENCE;
  const perMember = median(grouped) / AUDIENCE;
  console.log(
    `status fan-out vs group message (one Baileys socket, ${AUDIENCE} contacts, median of ${ROUNDS})`,
  );
  console.log(`  status (key copy to every viewer):   ${perViewer.toFixed(3)} ms per viewer`);
  console.log(`  group, first message (key to all):   ${(groupFirst / AUDIENCE).toFixed(3)} ms per member`);
  console.log(`  group, later message (no key copy):  ${perMember.toFixed(3)} ms per member`);
  console.log(`  ratio status / later group message:  ${(perViewer / perMember).toFixed(1)}x`);
  console.log(
    '  (a group send here asks the simulator for the group metadata each time; the gateway reads its group cache)',
  );
  await device.end();
} finally {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
process.exit(0);
