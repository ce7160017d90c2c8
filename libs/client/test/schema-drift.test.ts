import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { apiDocument, SCHEMA_FILE, typesOf } from '../scripts/schema-source.js';

/**
 * The committed types are what the API's document generates: a change of the document (a route,
 * a field, a limit in a description) without `npm run -w @mgw/client generate` fails here.
 * That the running gateway serves that document: client.test.ts.
 */
describe('@mgw/client types (drift check)', function () {
  this.timeout(60_000);

  it('When the types are generated again from the API\u2019s document, then they equal the committed src/schema.d.ts', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    const generated = await typesOf(await apiDocument());
    // One line of the difference, not 5,000: enough to see what moved.
    const a = committed.split('\n');
    const b = generated.split('\n');
    const first = a.findIndex((line, i) => line !== b[i]);
    expect(
      first,
      `src/schema.d.ts differs from the document at line ${first + 1}: run \`npm run -w @mgw/client generate\`\n` +
        `committed: ${a[first]}\ngenerated: ${b[first]}`,
    ).to.equal(-1);
    expect(a.length).to.equal(b.length);
  });

  it('When the document changes, then the generated types change (the check is not blind)', async () => {
    const changed = structuredClone(await apiDocument()) as { paths: Record<string, unknown> };
    changed.paths['/api/messenger/v1/extra'] = changed.paths['/api/messenger/v1/status'];
    const types = await typesOf(changed);
    expect(types).to.not.equal(await readFile(SCHEMA_FILE, 'utf8'));
    expect(types).to.include("'/api/messenger/v1/extra': {");
  });
});
