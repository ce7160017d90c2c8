import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { ADMIN_SCHEMA_FILE, adminDocument, adminTypesOf } from '../scripts/admin-schema-source.js';

/**
 * The console's committed admin types are what the admin API's document generates: a change of
 * an admin route or answer without `npm run -w @mgw/console generate` fails here. (It runs the
 * API's document CLI as a process: outside the fast lane.) That the answers are what the document
 * says: the API's tests check every admin answer against it (services/api/test/helpers/openapi-check.ts).
 */
describe('@mgw/console admin types (drift check)', function () {
  this.timeout(60_000);

  it('When the types are generated again from the admin API\u2019s document, then they equal the committed src/kit/admin-schema.d.ts', async () => {
    const committed = await readFile(ADMIN_SCHEMA_FILE, 'utf8');
    const generated = await adminTypesOf(await adminDocument());
    // One line of the difference, not thousands: enough to see what moved.
    const a = committed.split('\n');
    const b = generated.split('\n');
    const first = a.findIndex((line, i) => line !== b[i]);
    expect(
      first,
      `src/kit/admin-schema.d.ts differs from the admin document at line ${first + 1}: run \`npm run -w @mgw/console generate\`\n` +
        `committed: ${a[first]}\ngenerated: ${b[first]}`,
    ).to.equal(-1);
    expect(a.length).to.equal(b.length);
  });

  it('When the document changes, then the generated types change (the check is not blind)', async () => {
    const changed = structuredClone(await adminDocument()) as { paths: Record<string, unknown> };
    changed.paths['/api/admin/v1/extra'] = changed.paths['/api/admin/v1/session'];
    const types = await adminTypesOf(changed);
    expect(types).to.not.equal(await readFile(ADMIN_SCHEMA_FILE, 'utf8'));
    expect(types).to.include("'/api/admin/v1/extra': {");
  });
});
