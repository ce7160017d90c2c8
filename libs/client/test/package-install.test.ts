import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { useSharedStack, waitFor } from '@mgw/testing';
import { REPO_ROOT } from '../scripts/schema-source.js';

/**
 * @mgw/client as code outside the checkout gets it: `npm pack -w @mgw/client` makes a tarball,
 * a scratch project in the temp directory (its own package.json, nothing of the checkout's
 * node_modules in reach) `npm install`s it, its TypeScript typechecks against the installed types
 * (a wrong field does not), and a plain JavaScript script of it sends through a running gateway
 * (API, connection and sender as processes, real Redis, a device linked through the simulator):
 * the messages arrive. The install needs the npm registry (openapi-fetch): without it the test
 * fails, saying why.
 */

const CLIENT_DIR = path.join(REPO_ROOT, 'libs/client');
const TSC = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never throws (the caller judges the exit code). */
function run(file: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve) =>
    execFile(
      file,
      args,
      { cwd: opts.cwd, env: opts.env ?? process.env, maxBuffer: 32 * 1024 * 1024, timeout: 180_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}

/** Runs a command and throws with its output when it fails. */
async function mustRun(
  what: string,
  file: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Ran> {
  const ran = await run(file, args, opts);
  if (ran.code !== 0) {
    throw new Error(
      `${what} failed (exit ${ran.code}): ${file} ${args.join(' ')}\n${ran.stdout}\n${ran.stderr}`.trim(),
    );
  }
  return ran;
}

/**
 * The test's environment for npm, without what an enclosing `npm test` or `npm run -w` exports for
 * its own package (npm_package_*, npm_lifecycle_*, a workspace or prefix in npm_config_*): the
 * scratch project is a project of its own.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_/i.test(key)) continue;
    if (
      /^npm_config_(workspaces?|include_workspace_root|prefix|local_prefix|global|dry_run|json)$/i.test(key)
    )
      continue;
    if (key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return env;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Typed use of the installed client: it compiles only if the tarball's types are right. */
const CONSUMER_TS = `import { createGatewayClient, type MessageAnswer, type SendAccepted } from '@mgw/client';

export async function sendList(baseUrl: string, token: string, to: string[], text: string): Promise<string[]> {
  const gateway = createGatewayClient({ baseUrl, token });
  const sent = await gateway.send({ to, text });
  if (!sent.ok) throw new Error(\`\${sent.status} \${sent.error.error} \${sent.error.details?.[0]?.message ?? ''}\`);
  const answer: SendAccepted = sent.data;
  const ids: string[] = answer.messageIds ?? [answer.messageId];
  const read = await gateway.getMessage(ids[0]!);
  if (read.ok) {
    const status: MessageAnswer['data']['status'] = read.data.data.status;
    const reason: string | undefined = read.data.data.error;
    console.log(status, reason);
  }
  const batch = await gateway.api.GET('/api/messenger/v1/batches/{batchId}', {
    params: { path: { batchId: answer.messageId } },
  });
  if (batch.data) console.log(batch.data.data.total);
  return ids;
}
`;

/** The same calls, wrong: a field POST /send does not take, one the record does not have. */
const WRONG_TS = `import { createGatewayClient } from '@mgw/client';

const gateway = createGatewayClient({ baseUrl: 'http://127.0.0.1:3000', token: 't' });
export const sent = await gateway.send({ to: ['15550000002'], txt: 'typo' });
const read = await gateway.getMessage('x');
if (read.ok) console.log(read.data.data.statuz);
`;

/** Plain JavaScript, run by node without flags: a list of two, then one number. */
const SEND_MJS = `import { createGatewayClient } from '@mgw/client';

const gateway = createGatewayClient({ baseUrl: process.env.GW_URL, token: process.env.TOKEN });
const [a, b, c] = process.env.TO.split(',');
const text = process.env.TEXT;
const list = await gateway.send({ to: [a, b], text });
const single = await gateway.send({ to: c, text });
if (!list.ok || !single.ok) {
  console.error(JSON.stringify({ list, single }));
  process.exit(1);
}
const ids = [...list.data.messageIds, single.data.messageId];
const statuses = {};
for (const id of ids) {
  for (let i = 0; i < 120; i++) {
    const read = await gateway.getMessage(id);
    if (!read.ok) throw new Error(\`\${id}: \${read.status} \${read.error.error}\`);
    statuses[id] = read.data.data.status;
    if (!['queued', 'scheduled'].includes(statuses[id])) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
const batch = await gateway.api.GET('/api/messenger/v1/batches/{batchId}', {
  params: { path: { batchId: list.data.messageId } },
});
console.log(JSON.stringify({ list: list.data, single: single.data, statuses, batchTotal: batch.data?.data.total }));
`;

describe('@mgw/client installed from its tarball outside the checkout', function () {
  this.timeout(300_000);
  const stack = useSharedStack();
  const account = '15550210001';
  const contacts = ['15550210002', '15550210003', '15550210004'];
  let work = '';
  let tarball = '';
  let app = '';
  let manifestBefore = '';
  let manifestMtime = 0;

  before(async function () {
    this.timeout(300_000);
    // Real path: tsc and node name files by it.
    work = await realpath(await mkdtemp(path.join(os.tmpdir(), 'mgw-client-pack-')));
    manifestBefore = await readFile(path.join(CLIENT_DIR, 'package.json'), 'utf8');
    manifestMtime = (await stat(path.join(CLIENT_DIR, 'package.json'))).mtimeMs;
    const packed = path.join(work, 'packed');
    await mkdir(packed);
    await mustRun('npm pack', 'npm', ['pack', '-w', '@mgw/client', '--pack-destination', packed], {
      cwd: REPO_ROOT,
      env: npmEnv(),
    });
    const made = (await readdir(packed)).filter((f) => f.endsWith('.tgz'));
    expect(made, 'tarballs made').to.deep.equal(['mgw-client-0.1.0.tgz']);
    tarball = path.join(packed, made[0]!);

    app = path.join(work, 'app');
    await mkdir(app);
    await writeFile(
      path.join(app, 'package.json'),
      json({ name: 'client-consumer', version: '1.0.0', private: true, type: 'module' }),
    );
    await mustRun(
      'npm install of the tarball (needs the npm registry for openapi-fetch)',
      'npm',
      [
        'install',
        tarball,
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--loglevel=error',
        '--prefix',
        app,
      ],
      { cwd: app, env: npmEnv() },
    );
  });

  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('When the client is packed, then the tarball holds the built JavaScript, its types and a manifest a consumer resolves, and the checkout is as it was', async () => {
    const listed = (await mustRun('tar -t', 'tar', ['-tzf', tarball], { cwd: work })).stdout;
    const files = listed.split('\n').filter(Boolean).sort();
    expect(files).to.include.members([
      'package/package.json',
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/schema.d.ts',
    ]);
    expect(
      files.filter((f) => !/^package\/(package\.json|dist\/[^/]+\.(js|js\.map|d\.ts))$/.test(f)),
    ).to.deep.equal([]);

    await mustRun('tar -x', 'tar', ['-xzf', tarball, '-C', work, 'package/package.json'], { cwd: work });
    const manifest = JSON.parse(await readFile(path.join(work, 'package/package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).to.include({ name: '@mgw/client', version: '0.1.0', type: 'module', private: true });
    expect(manifest.dependencies).to.have.all.keys('openapi-fetch');
    // Only what resolves in the tarball: no `development` (src/ is not in it), no checkout scripts.
    expect(manifest.exports).to.deep.equal({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
    });
    expect(manifest).to.not.have.any.keys('devDependencies', 'scripts');

    // The checkout's own manifest is back, byte for byte and with its time, and nothing is left aside.
    expect(await readFile(path.join(CLIENT_DIR, 'package.json'), 'utf8')).to.equal(manifestBefore);
    expect((await stat(path.join(CLIENT_DIR, 'package.json'))).mtimeMs).to.equal(manifestMtime);
    expect(await readdir(CLIENT_DIR)).to.not.include('.package.json.workspace');
    expect(manifestBefore).to.include('"development": "./src/index.ts"');
  });

  it('When a TypeScript project typechecks against the installed package, then typed use compiles (nodenext, and bundler with the development condition), the shipped example too, and a wrong field does not', async () => {
    await writeFile(path.join(app, 'consumer.ts'), CONSUMER_TS);
    await writeFile(path.join(app, 'wrong.ts'), WRONG_TS);
    await writeFile(path.join(app, 'send.ts'), await readFile(path.join(CLIENT_DIR, 'examples/send.ts')));
    const strict = {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      skipLibCheck: false,
      noUncheckedIndexedAccess: true,
    };
    await writeFile(
      path.join(app, 'tsconfig.json'),
      json({
        compilerOptions: {
          ...strict,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          // The example reads process.env: Node's types, from the checkout (types only).
          typeRoots: [path.join(REPO_ROOT, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['consumer.ts', 'send.ts'],
      }),
    );
    await writeFile(
      path.join(app, 'tsconfig.bundler.json'),
      json({
        compilerOptions: {
          ...strict,
          module: 'ESNext',
          moduleResolution: 'Bundler',
          customConditions: ['development'],
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        files: ['consumer.ts'],
      }),
    );
    await writeFile(
      path.join(app, 'tsconfig.wrong.json'),
      json({
        compilerOptions: {
          ...strict,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        files: ['wrong.ts'],
      }),
    );

    const nodenext = await mustRun(
      'tsc (nodenext)',
      process.execPath,
      [TSC, '-p', 'tsconfig.json', '--listFiles'],
      {
        cwd: app,
      },
    );
    const listed = nodenext.stdout.split('\n').filter(Boolean);
    const installed = path.join(app, 'node_modules/@mgw/client');
    expect(listed).to.include.members([
      path.join(installed, 'dist/index.d.ts'),
      path.join(installed, 'dist/schema.d.ts'),
    ]);
    // Nothing of the checkout's sources or workspace packages (a workspace link resolves to them):
    // from the checkout only TypeScript's libs and Node's types (with what they reference).
    const modules = path.join(REPO_ROOT, 'node_modules') + path.sep;
    expect(
      listed.filter(
        (f) =>
          f.startsWith(REPO_ROOT) && (!f.startsWith(modules) || f.startsWith(path.join(modules, '@mgw'))),
      ),
    ).to.deep.equal([]);

    const bundler = await mustRun(
      'tsc (bundler, development condition)',
      process.execPath,
      [TSC, '-p', 'tsconfig.bundler.json', '--listFiles'],
      { cwd: app },
    );
    expect(bundler.stdout).to.include(path.join(installed, 'dist/index.d.ts'));

    const wrong = await run(process.execPath, [TSC, '-p', 'tsconfig.wrong.json'], { cwd: app });
    expect(wrong.code, wrong.stdout).to.not.equal(0);
    expect(wrong.stdout).to.match(/wrong\.ts\(4,\d+\): error TS\d+: .*'txt'/);
    expect(wrong.stdout).to.match(/wrong\.ts\(6,\d+\): error TS\d+: .*'statuz'/);
  });

  it('When a plain JavaScript script of the project sends a list and one number through the installed client, then each message arrives and the answers have their shapes', async () => {
    await stack().linkByQr(account, 'Package Test');
    await stack().waitForStatus('connected');
    await writeFile(path.join(app, 'send.mjs'), SEND_MJS);
    const env = { PATH: process.env.PATH ?? '', HOME: os.homedir() };

    // Even with the development condition set (as Vite or webpack set it), the package resolves
    // to its built JavaScript.
    const resolved = await mustRun(
      'resolve',
      process.execPath,
      [
        '--conditions=development',
        '--input-type=module',
        '-e',
        "console.log(import.meta.resolve('@mgw/client'))",
      ],
      { cwd: app, env },
    );
    expect(resolved.stdout.trim()).to.equal(
      `file://${path.join(app, 'node_modules/@mgw/client/dist/index.js')}`,
    );

    const text = `from the tarball ${randomUUID()}`;
    const ran = await mustRun('node send.mjs', process.execPath, ['send.mjs'], {
      cwd: app,
      env: { ...env, GW_URL: stack().apiUrl, TOKEN: stack().token, TO: contacts.join(','), TEXT: text },
    });
    const out = JSON.parse(ran.stdout.trim().split('\n').pop()!) as {
      list: { success: boolean; messageId: string; messageIds: string[] };
      single: Record<string, unknown>;
      statuses: Record<string, string>;
      batchTotal: number;
    };
    // A list: the batch id as messageId, one message id per recipient; one number: its messageId only.
    expect(out.list.success).to.equal(true);
    expect(out.list.messageIds).to.have.length(2);
    expect(out.list.messageIds).to.not.include(out.list.messageId);
    expect(out.single).to.have.all.keys('success', 'messageId');
    expect(out.batchTotal).to.equal(2);
    for (const status of Object.values(out.statuses))
      expect(['sent', 'delivered', 'read']).to.include(status);
    expect(Object.keys(out.statuses)).to.have.length(3);

    for (const phone of contacts) {
      await waitFor(async () => (await stack().inbox(phone)).some((m) => m.text === text), {
        timeoutMs: 30_000,
        what: `the text in ${phone}'s inbox`,
      });
      expect((await stack().inbox(phone)).filter((m) => m.text === text)).to.have.length(1);
    }
  });
});
