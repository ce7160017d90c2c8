import { writeFile } from 'node:fs/promises';
import { apiDocument, SCHEMA_FILE, typesOf } from './schema-source.js';

/** `npm run -w @mgw/client generate`: writes src/schema.d.ts from the API's document. */
await writeFile(SCHEMA_FILE, await typesOf(await apiDocument()));
process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
