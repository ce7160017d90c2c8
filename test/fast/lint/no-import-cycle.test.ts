import { expect } from 'chai';
import { lintAs } from './eslint.js';

/**
 * Issue 82: the linter keeps import circles out of libs/ (scripts/eslint/no-import-cycle.js). Each
 * probe is linted as if it were a file of the tree, its imports followed through the files on disk:
 * `groups.ts` imports `group-limits.ts`, so a `group-limits.ts` that imports `groups.ts` back closes
 * a circle.
 */
async function circles(filePath: string, code: string): Promise<string[]> {
  return (await lintAs(filePath, code))
    .filter((m) => m.ruleId === 'circles/no-import-cycle')
    .map((m) => m.message);
}

describe('lint: no import circles in libs/ (issue 82)', function () {
  this.timeout(60_000);

  it('When a module imports one that imports it back, then the lint names the circle, file by file', async () => {
    const found = await circles(
      'libs/contracts/src/group-limits.ts',
      "import { GROUP_JID_PATTERN } from './groups.js';\nexport const GROUP_LIMITS = { subject: 100, pattern: GROUP_JID_PATTERN };\n",
    );
    expect(found).to.have.length(1);
    expect(found[0]).to.include(
      'Import circle: libs/contracts/src/group-limits.ts → libs/contracts/src/groups.ts → libs/contracts/src/group-limits.ts',
    );
  });

  it('When the import back is a type import or a re-export, then it is a circle all the same', async () => {
    for (const code of [
      "import type { GroupAction } from './groups.js';\nexport type A = GroupAction;\n",
      "export { GROUP_JID_PATTERN } from './groups.js';\n",
      "export * from './groups.js';\n",
    ])
      expect(await circles('libs/contracts/src/group-limits.ts', code), code).to.have.length(1);
  });

  it('When the circle runs through other modules, then it is found, with every step', async () => {
    // send-body.ts imports groups.ts, which imports group-limits.ts.
    const found = await circles(
      'libs/contracts/src/group-limits.ts',
      "import { sendBodySchema } from './send-body.js';\nexport const s = sendBodySchema;\n",
    );
    expect(found).to.have.length(1);
    expect(found[0]).to.include(
      'libs/contracts/src/group-limits.ts → libs/contracts/src/send-body.ts → libs/contracts/src/groups.ts → libs/contracts/src/group-limits.ts',
    );
  });

  it('When a module imports without a way back, or loads one on demand, then the lint is quiet', async () => {
    expect(
      await circles(
        'libs/contracts/src/group-limits.ts',
        "import { isLidAddress } from './jid.js';\nexport const x = isLidAddress;\n",
      ),
    ).to.deep.equal([]);
    // A dynamic import() is how a module loads another when it needs it: not a circle.
    expect(
      await circles(
        'libs/contracts/src/group-limits.ts',
        "export const later = () => import('./groups.js');\n",
      ),
    ).to.deep.equal([]);
  });

  it('When a circle is outside libs/ (a service’s modules), then this rule does not judge it', async () => {
    expect(
      await circles(
        'services/api/src/app.ts',
        "import { createApp } from './app.js';\nexport const again = createApp;\n",
      ),
    ).to.deep.equal([]);
  });
});
