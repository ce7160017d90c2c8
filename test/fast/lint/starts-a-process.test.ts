import { expect } from 'chai';
import { processSigns } from '../../../scripts/eslint/starts-a-process.js';
import { ROOT, lintAs } from './eslint.js';

/**
 * A test outside the fast lane starts a process or opens a connection; one that shows no sign of
 * it is refused by the linter, which sends it to the lane's folders (scripts/eslint/starts-a-process.js,
 * wired in eslint.config.js for `npm test`'s test files outside `.mocharc.fast.json`'s).
 */
async function refusals(filePath: string, code: string): Promise<string[]> {
  return (await lintAs(filePath, code))
    .filter((m) => m.ruleId === 'lane/starts-a-process')
    .map((m) => m.message);
}

const test = (imports: string, body = 'expect(1).to.equal(1);') =>
  `import { expect } from 'chai';\n${imports}\ndescribe('probe', () => {\n  it('probes', async () => {\n    ${body}\n  });\n});\n`;

/** The signs of a test at `file` (from the root) made of `imports` and `body`. */
const signs = (file: string, imports: string, body?: string) =>
  processSigns(`${ROOT}${file}`, test(imports, body), ROOT.replace(/\/$/, ''));

describe('lint: a test outside the fast lane starts a process (lane/starts-a-process)', function () {
  this.timeout(120_000);

  it('When a test outside the lane (a test/ or e2e/ folder) shows no sign of a process or a connection, then the lint refuses it and names the lane’s folders', async () => {
    for (const file of [
      'libs/common/test/probe.test.ts',
      'services/sender/test/e2e/probe.test.ts',
      'services/api/src/features/probe/e2e/probe.test.ts',
      'test/probe.test.ts',
    ]) {
      const found = await refusals(file, test(''));
      expect(found, file).to.have.length(1);
      expect(found[0]).to.include('starts no process and opens no connection');
      expect(found[0]).to.include("its package's test/fast/ (test/fast/ at the root)");
      expect(found[0]).to.include('beside its code under src/ outside e2e/');
    }
    // The tree typescript-eslint parsed is read: a sign in it keeps the lint quiet.
    expect(
      await refusals(
        'services/sender/test/e2e/probe.test.ts',
        test("import { useStack } from '@mgw/testing';"),
      ),
    ).to.deep.equal([]);
  });

  it('When the test is in the lane’s folders, or the file is no test, then the rule does not apply', async () => {
    for (const file of [
      'libs/common/test/fast/probe.test.ts',
      'services/api/src/features/probe/probe-thing.test.ts',
      'test/fast/lint/probe.test.ts',
      'services/api/test/helpers/probe.ts',
    ]) {
      expect(await refusals(file, test('')), file).to.deep.equal([]);
    }
  });

  it('When a test starts a process or opens a connection (a module, a name of the test kit, fetch, REDIS_URL, a video Baileys sends, a helper of its own that does), then it shows a sign', () => {
    for (const [imports, body, sign] of [
      ["import { Redis } from 'ioredis';", 'new Redis().disconnect();', 'ioredis'],
      ["import { Queue } from 'bullmq';", '', 'bullmq'],
      ["import { spawn } from 'node:child_process';", "spawn('true');", 'node:child_process'],
      ['', "const { execFile } = await import('child_process');", 'child_process'],
      ["import { createServer } from 'node:http';", 'createServer().close();', 'node:http'],
      ["import { chromium } from 'playwright-core';", '', 'playwright-core'],
      ["import { SQSClient } from '@aws-sdk/client-sqs';", '', '@aws-sdk/client-sqs'],
      ["import { useStack } from '@mgw/testing';", '', 'useStack from @mgw/testing'],
      ["import { Stack, waitFor } from '@mgw/testing';", '', 'Stack from @mgw/testing'],
      ["import * as kit from '@mgw/testing';", '', '* from @mgw/testing'],
      ["import { startRedisServer } from '@mgw/testing/redis-server';", '', '@mgw/testing/redis-server'],
      ['', "await fetch('http://127.0.0.1:1/');", 'fetch'],
      ['', 'expect(process.env.REDIS_URL).to.be.a("string");', 'REDIS_URL'],
      ['', "const env = { ...process.env, ['REDIS_URL']: 'x' };", 'REDIS_URL'],
      [
        "import { createRedis } from '@mgw/common';",
        "createRedis('redis://127.0.0.1:1', 'producer', 'p');",
        'createRedis',
      ],
      // Baileys runs ffmpeg for a video's thumbnail.
      ['', "await sock.sendMessage(jid, { video: bytes, mimetype: 'video/mp4' });", 'video'],
    ] as const) {
      expect(signs('libs/common/test/probe.test.ts', imports, body), imports || body).to.include(sign);
    }
    // A helper of its own that starts the API on the run's Redis, and one of the test kit's modules.
    expect(
      signs('services/api/test/probe.test.ts', "import { startApi } from './helpers/api.js';"),
    ).to.deep.equal(['./helpers/api.js (createRedis)']);
    expect(
      signs('libs/testing/test/probe.test.ts', "import { startRedisServer } from '../src/index.js';"),
    ).to.deep.equal(['startRedisServer from ../src/index.js']);
  });

  it('When what it has only looks like a sign (types, the kit’s in-process helpers, product code given fakes, a property named fetch, a call’s video flag, a comment), then it shows none', () => {
    for (const [imports, body] of [
      ["import type { Redis } from 'ioredis';", 'const r: Redis | undefined = undefined;'],
      ["import { type ChildProcess } from 'node:child_process';", 'const c = 1 as unknown as ChildProcess;'],
      ["import { sleep, until, startTestSimulator, linkTestDevice } from '@mgw/testing';", 'await sleep(1);'],
      ['', 'const client = { fetch: async () => 1 }; expect(await client.fetch()).to.equal(1);'],
      ['// fetch and REDIS_URL are not needed here', ''],
      ['', 'const offer = { video: true, from: jid };'],
    ] as const) {
      expect(signs('libs/common/test/probe.test.ts', imports, body), imports || body).to.deep.equal([]);
    }
    // The product code a test imports is not read (a unit test gives it fakes: @mgw/store uses
    // ioredis), the test kit's own modules are by name.
    expect(
      signs('libs/store/test/probe.test.ts', "import { TokenStore } from '../src/index.js';"),
    ).to.deep.equal([]);
    expect(signs('libs/store/test/probe.test.ts', "import { TokenStore } from '@mgw/store';")).to.deep.equal(
      [],
    );
    expect(
      signs('libs/testing/test/probe.test.ts', "import { until } from '../src/index.js';"),
    ).to.deep.equal([]);
  });
});
