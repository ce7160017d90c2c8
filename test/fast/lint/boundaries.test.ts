import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, eslint, lintAs } from './eslint.js';

/**
 * The package boundaries are the linter's job (eslint.config.js): these cases prove each rule
 * fires on a file that breaks it, and stays quiet on the same import where it is allowed.
 */
async function problems(filePath: string, code: string): Promise<string[]> {
  return (
    (await lintAs(filePath, code))
      // A probe outside the fast lane starts no process: that rule has its own test (starts-a-process).
      .filter((m) => m.severity === 2 && m.ruleId !== 'lane/starts-a-process')
      .map((m) => `${m.ruleId}: ${m.message}`)
  );
}

/**
 * The use-case rule's message (eslint.config.js HTTP_FREE): a file the rule is configured for has it
 * in its `no-restricted-imports` options.
 */
const HTTP_FREE = 'A use case returns an outcome';

const use = (spec: string, name = 'x') => `import { ${name} } from '${spec}';\nexport const y = ${name};\n`;

describe('package boundaries (eslint)', function () {
  // Linting the API's use cases took 17 s in a CI run when it linted their tests too; a slow
  // machine has taken over 60.
  this.timeout(180_000);

  it('When a service imports Baileys, then the lint fails; libs/messenger may', async () => {
    const code = use('@whiskeysockets/baileys', 'proto');
    expect(await problems('services/sender/src/probe.ts', code)).to.satisfy((p: string[]) =>
      p.some((m) => m.includes('Only libs/messenger imports Baileys')),
    );
    expect(await problems('services/api/test/probe.test.ts', code)).to.have.length.greaterThan(0);
    expect(await problems('libs/messenger/src/probe.ts', code)).to.deep.equal([]);
  });

  it('When libs/common imports any @mgw package, then the lint fails', async () => {
    for (const pkg of ['@mgw/contracts', '@mgw/store', '@mgw/messenger']) {
      const p = await problems('libs/common/src/probe.ts', use(pkg));
      expect(p.join('\n'), pkg).to.include('libs/common may import only: no @mgw package');
    }
  });

  it('When a service imports another service (in src or tests), then the lint fails', async () => {
    expect((await problems('services/api/src/probe.ts', use('@mgw/sender'))).join()).to.include(
      'may import only',
    );
    expect(
      (await problems('services/sender/test/probe.test.ts', use('@mgw/connection/config'))).join(),
    ).to.include('may import only');
    expect(await problems('services/api/src/probe.ts', use('@mgw/store'))).to.deep.equal([]);
  });

  it('When production code imports the test kit or the simulator, then the lint fails; its tests may', async () => {
    expect((await problems('services/sender/src/probe.ts', use('@mgw/testing'))).join()).to.include(
      'may import only',
    );
    expect((await problems('libs/messenger/src/probe.ts', use('@mgw/messenger-sim'))).join()).to.include(
      'may import only',
    );
    expect(await problems('services/sender/test/probe.test.ts', use('@mgw/testing'))).to.deep.equal([]);
  });

  it('When a file reaches into another package by a relative path (its src or its test folder), then the lint fails', async () => {
    const intoSrc = await problems('services/api/src/probe.ts', use('../../sender/src/pacing.js', 'Pacer'));
    expect(intoSrc.join()).to.include('mgw/no-cross-package-relative');
    const intoTests = await problems(
      'services/sender/test/e2e/probe.test.ts',
      use('../../../api/test/helpers/api.js', 'startApi'),
    );
    expect(intoTests.join()).to.include('mgw/no-cross-package-relative');
    expect(
      await problems('services/api/test/probe.test.ts', use('./helpers/api.js', 'startApi')),
    ).to.deep.equal([]);
  });

  it("When an API use case (a feature's, enqueue/) imports the HTTP layer or express, then the lint fails; its mount, admin surface and openapi may", async () => {
    const useCases = [
      'services/api/src/enqueue/probe.ts',
      'services/api/src/features/probe/probe-thing.ts',
      'services/api/src/features/holder/probe.ts',
    ];
    for (const file of useCases) {
      for (const code of [
        use('../http/api-error.js', 'ApiError'),
        use('../http/idempotency.js', 'Idempotency'),
        use('express', 'Router'),
      ]) {
        expect((await problems(file, code)).join('\n'), `${file}: ${code}`).to.include(HTTP_FREE);
      }
      // The package boundary still holds there.
      expect((await problems(file, use('@mgw/sender'))).join(), file).to.include('may import only');
      expect(await problems(file, use('@mgw/store'))).to.deep.equal([]);
    }
    for (const route of [
      'services/api/src/features/probe/mount.ts',
      'services/api/src/features/probe/openapi.ts',
      'services/api/src/features/mounts.ts',
      'services/api/src/features/probe/admin.ts',
    ]) {
      expect(await problems(route, use('../http/api-error.js', 'ApiError')), route).to.deep.equal([]);
      expect(await problems(route, use('express', 'Router')), route).to.deep.equal([]);
    }
  });

  it('When a test sits beside its code (a use case’s, or an e2e/ folder of its capability), then it may import the test kit and the HTTP layer; the code beside it may not', async () => {
    for (const test of [
      'services/api/src/features/probe/probe-thing.test.ts',
      'services/api/src/features/probe/e2e/probe.test.ts',
      'services/sender/src/probe.test.ts',
    ]) {
      expect(await problems(test, use('@mgw/testing')), test).to.deep.equal([]);
      expect((await problems(test, use('@mgw/connection'))).join(), test).to.include('may import only');
    }
    expect(
      await problems('services/api/src/features/probe/e2e/probe.test.ts', use('express', 'Router')),
    ).to.deep.equal([]);
    expect(
      (await problems('services/api/src/features/probe/probe-thing.ts', use('@mgw/testing'))).join(),
    ).to.include('may import only');
  });

  it("Then no API use case imports the HTTP layer or express (the API's own sources, linted)", async () => {
    // The files the rule is configured for (its tests and the HTTP side are not), and only those:
    // linting the folders' tests too took three times as long and could not find anything there.
    const sources = ['enqueue', 'features'].flatMap((dir) =>
      readdirSync(`${ROOT}services/api/src/${dir}`, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.ts'))
        .map((e) => path.join(e.parentPath, e.name)),
    );
    const useCases: string[] = [];
    for (const file of sources) {
      const rule: unknown = (await eslint().calculateConfigForFile(file))?.rules?.['no-restricted-imports'];
      if (JSON.stringify(rule ?? null).includes(HTTP_FREE)) useCases.push(file);
    }
    expect(useCases.length, `of ${sources.length}`).to.be.greaterThan(100);
    const results = await eslint().lintFiles(useCases);
    const found = results.flatMap((r) =>
      r.messages
        .filter((m) => m.message.includes(HTTP_FREE))
        .map((m) => `${r.filePath.slice(ROOT.length)}:${m.line}: ${m.message}`),
    );
    expect(results.length).to.equal(useCases.length);
    expect(found).to.deep.equal([]);
  });

  it("When a feature imports another feature's files, then the lint fails; its index.ts, its own files and the wiring may", async () => {
    const rule = 'features/imports-through-index';
    for (const [file, spec] of [
      ['services/api/src/features/probe/probe-thing.ts', '../labels/mount.js'],
      ['services/api/src/features/probe/mount.ts', '../holder/ask-holder.js'],
      ['services/api/src/features/probe/admin.ts', '../devices/device-directory.js'],
    ] as const) {
      expect((await problems(file, use(spec))).join(), `${file}: ${spec}`).to.include(rule);
    }
    for (const [file, spec] of [
      ['services/api/src/features/probe/probe-thing.ts', '../labels/index.js'],
      ['services/api/src/features/probe/mount.ts', './probe-thing.js'],
      ['services/api/src/features/mounts.ts', './labels/mount.js'],
      ['services/api/src/app.ts', './features/labels/mount.js'],
      // A test may reach into another feature for its fixtures.
      ['services/api/src/features/probe/probe-thing.test.ts', '../holder/memory-holder.js'],
    ] as const) {
      expect((await problems(file, use(spec))).join(), `${file}: ${spec}`).not.to.include(rule);
    }
  });

  it('When a package is imported by its folders instead of its name, then the lint fails', async () => {
    const p = await problems('services/api/src/probe.ts', use('@mgw/store/src/token-store.js', 'TokenStore'));
    expect(p.join()).to.include('Import a package by its name');
  });

  it("When the console's kit imports a capability's folder (its screen or its CSS), then the lint fails; a screen may import the kit and another capability", async () => {
    const fromKit = await problems('libs/console/src/kit/probe.tsx', use('../pools/pools', 'PoolsPage'));
    expect(fromKit.join()).to.include('The console kit imports no capability folder');
    const css = await problems('libs/console/src/kit/probe.tsx', "import '../workspaces/workspaces.css';\n");
    expect(css.join()).to.include('The console kit imports no capability folder');
    expect(await problems('libs/console/src/kit/probe.tsx', use('./format', 'phone'))).to.deep.equal([]);
    expect(
      await problems('libs/console/src/chats/probe.tsx', use('../labels/device-labels', 'LabelChip')),
    ).to.deep.equal([]);
    expect(await problems('libs/console/src/chats/probe.tsx', use('../kit/format', 'phone'))).to.deep.equal(
      [],
    );
  });

  it("When the console's sources (a .tsx screen, or the kit) import any @mgw package, then the lint fails; its tests may use the store", async () => {
    for (const file of ['libs/console/src/pools/probe.tsx', 'libs/console/src/kit/probe.ts']) {
      const p = await problems(file, use('@mgw/store', 'PoolStore'));
      expect(p.join('\n'), file).to.include('libs/console may import only: no @mgw package');
    }
    expect(
      await problems('libs/console/src/pools/e2e/probe.test.ts', use('@mgw/store', 'PoolStore')),
    ).to.deep.equal([]);
  });
});
