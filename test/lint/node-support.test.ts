import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

/**
 * The supported Nodes are written once, in package.json's `engines.node`; the preflight that
 * `npm test` and `npm start` run first reads them there, and the pinned Node (.node-version: CI,
 * the image) and the Node types the code is checked against agree with them.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PREFLIGHT = join(ROOT, 'scripts/check-node.cjs');
const { supports, describe: describeRange } = createRequire(import.meta.url)(PREFLIGHT) as {
  supports: (range: string, version: string) => boolean;
  describe: (range: string) => string;
};
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};
const range = pkg.engines.node;

function run(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [script], { timeout: 10_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('supported Nodes (engines.node, the preflight, .node-version, @types/node)', () => {
  it('When engines.node is read, then it names the LTS lines 20.19+, 22.13+ and 24+ and nothing older', () => {
    const verdicts = Object.fromEntries(
      [
        '18.20.8',
        '20.18.3',
        '20.19.0',
        '20.20.2',
        '21.7.3',
        '22.12.0',
        '22.13.0',
        '22.23.3',
        '23.11.0',
        '24.0.0',
        '24.21.0',
        '25.2.0',
      ].map((v) => [v, supports(range, v)]),
    );

    expect(verdicts).to.deep.equal({
      '18.20.8': false,
      '20.18.3': false,
      '20.19.0': true,
      '20.20.2': true,
      '21.7.3': false,
      '22.12.0': false,
      '22.13.0': true,
      '22.23.3': true,
      '23.11.0': false,
      '24.0.0': true,
      '24.21.0': true,
      '25.2.0': true,
    });
    expect(describeRange(range)).to.equal('20.19+, 22.13+ or 24+');
  });

  it('When the pinned Node and the Node types are read, then they are within engines.node and at its floor', () => {
    const pinned = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();
    const typesMajor = /(\d+)\./.exec(pkg.devDependencies['@types/node']!)![1];
    const floorMajor = /(\d+)\./.exec(range)![1];

    expect(supports(range, pinned), `.node-version ${pinned}`).to.equal(true);
    // Types of a newer Node would let an API the floor lacks through the type check.
    expect(typesMajor).to.equal(floorMajor);
  });

  it('When an installed package declares it needs a newer Node than the floor (npm warns EBADENGINE), then the README names it and says why it runs there', () => {
    const floor = semver.minVersion(range)!.version;
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } }>;
    };
    const warned = new Set(
      Object.entries(lock.packages)
        .filter(([, p]) => p.engines?.node && !semver.satisfies(floor, p.engines.node))
        .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    );
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const said = readme.slice(readme.indexOf('`EBADENGINE`'), readme.indexOf('`EBADENGINE`') + 1200);
    expect(
      [...warned].filter((name) => !said.includes(`\`${name}\``)),
      `on Node ${floor}`,
    ).to.deep.equal([]);
  });

  it('When npm test, npm start or the sandbox run, then the preflight runs first', () => {
    for (const name of ['test', 'start', 'sandbox']) {
      expect(pkg.scripts[name], name).to.match(/^node scripts\/check-node\.cjs && /);
    }
  });

  it('When the running Node is supported, then the preflight passes silently', async () => {
    const r = await run(PREFLIGHT);

    expect(r).to.deep.equal({ code: 0, stdout: '', stderr: '' });
  });

  it('When the Node is outside engines.node, then the preflight fails at once with one line saying what to install', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mgw-check-node-'));
    try {
      mkdirSync(join(dir, 'scripts'));
      copyFileSync(PREFLIGHT, join(dir, 'scripts/check-node.cjs'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ engines: { node: '^90.1.0 || >=99' } }));
      writeFileSync(join(dir, '.node-version'), '99.3.1\n');

      const r = await run(join(dir, 'scripts/check-node.cjs'));

      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal('');
      expect(r.stderr.split('\n')).to.deep.equal([
        `Messenger Gateway needs Node 90.1+ or 99+, this is Node ${process.versions.node}: ` +
          'install Node 99 LTS (https://nodejs.org, or `nvm install 99`) and run it again.',
        '',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
