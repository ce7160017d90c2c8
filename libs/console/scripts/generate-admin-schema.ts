import { writeFile } from 'node:fs/promises';
import { ADMIN_SCHEMA_FILE, adminDocument, adminTypesOf } from './admin-schema-source.js';

/** `npm run -w @mgw/console generate`: writes src/kit/admin-schema.d.ts from the admin API's document. */
await writeFile(ADMIN_SCHEMA_FILE, await adminTypesOf(await adminDocument()));
process.stdout.write(`wrote ${ADMIN_SCHEMA_FILE}\n`);
