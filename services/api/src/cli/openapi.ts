import { randomBytes } from 'node:crypto';
import { loadApiConfig } from '../config.js';
import { buildOpenApi } from '../openapi/document.js';

/**
 * Prints the API's OpenAPI document (what `GET /api/messenger/v1/openapi.json` serves) built from
 * this process's environment, as JSON on stdout. `@mgw/client` generates its types from it: its
 * `generate` script runs this with an empty environment, i.e. the default configuration. The
 * document holds no secret, so a throwaway encryption key stands in when none is set.
 */
const env = { MGW_ENCRYPTION_KEY: `doc:${randomBytes(32).toString('base64')}`, ...process.env };
process.stdout.write(`${JSON.stringify(buildOpenApi(loadApiConfig(env)), null, 2)}\n`);
