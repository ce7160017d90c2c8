import { expect } from 'chai';
import { lintAs } from './eslint.js';

/**
 * WhatsApp addresses are parsed, never compared as strings (scripts/eslint/no-raw-jid.js,
 * @mgw/contracts jid.ts): these cases prove the rule refuses each raw comparison in product code
 * of libs/messenger, libs/contracts and the services, and leaves building an address, tests and
 * whole-format validation alone.
 */
async function refusals(filePath: string, code: string): Promise<string[]> {
  return (await lintAs(filePath, code)).filter((m) => m.ruleId === 'jid/no-raw-jid').map((m) => m.message);
}

const body = (expr: string) => `export const probe = (x: string, a: string): unknown => ${expr};\n`;

describe('lint: JIDs are parsed, never compared as strings (jid/no-raw-jid)', function () {
  this.timeout(120_000);

  it('When product code compares a JID as a string (a suffix, an equality with the server, a split at @, a pattern), then the lint refuses it', async () => {
    const raw = [
      "x.endsWith('@g.us')",
      "x.endsWith('@lid')",
      "x.startsWith('status@broadcast')",
      "x.split('@')[0]",
      "x.replace(/@s\\.whatsapp\\.net$/, '')",
      '/@lid$/.test(x)',
      "a === '@s.whatsapp.net'",
      "a !== 's.whatsapp.net'",
      "a === 'status@broadcast'",
    ];
    for (const file of [
      'libs/messenger/src/probe.ts',
      'services/sender/src/probe.ts',
      'services/api/src/probe.ts',
    ]) {
      for (const expr of raw) expect(await refusals(file, body(expr)), `${file}: ${expr}`).to.have.length(1);
    }
    const predicate = "import { isPnUser } from '@whiskeysockets/baileys';\nexport const p = isPnUser;\n";
    expect((await refusals('libs/messenger/src/probe.ts', predicate)).join()).to.include('isPnUser');
    const constant =
      "import { S_WHATSAPP_NET } from '@whiskeysockets/baileys';\nexport const p = (f: string) => f === S_WHATSAPP_NET;\n";
    expect(await refusals('libs/messenger/src/probe.ts', constant)).to.have.length(1);
    const suffix =
      "import { S_WHATSAPP_NET } from '@whiskeysockets/baileys';\nexport const p = (f: string) => f.endsWith(S_WHATSAPP_NET);\n";
    expect(await refusals('libs/messenger/src/probe.ts', suffix)).to.have.length(1);
  });

  it('When code builds an address, validates a whole input format, compares other strings, or is a test, then the lint is quiet', async () => {
    for (const expr of [
      '`${x}@s.whatsapp.net`',
      "a === 'lid'",
      "x.startsWith('@')",
      "x.endsWith('.png')",
      '/^\\d{5,30}@newsletter$/.test(x)',
    ])
      expect(await refusals('libs/messenger/src/probe.ts', body(expr)), expr).to.deep.equal([]);
    expect(await refusals('services/sender/src/probe.test.ts', body("x.endsWith('@g.us')"))).to.deep.equal(
      [],
    );
    expect(await refusals('libs/contracts/src/jid.ts', body("a === '@s.whatsapp.net'"))).to.deep.equal([]);
  });
});
