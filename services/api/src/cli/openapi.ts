import { randomBytes } from 'node:crypto';
import { loadApiConfig } from '../config.js';
import { buildAdminOpenApi, buildOpenApi } from '../openapi/document.js';

/**
 * Prints the API's OpenAPI document (what `GET /api/messenger/v1/openapi.json` serves) built from
 * this process's environment, as JSON on stdout; with `--admin`, the admin API's document
 * (buildAdminOpenApi). `@mgw/client` generates its types from the first, the console
 * (`@mgw/console`) its admin types from the second: their `generate` scripts run this with an
 * empty environment, i.e. the default configuration. The documents hold no secret, so a throwaway
 * encryption key stands in when none is set.
 */
const env = { MGW_ENCRYPTION_KEY: `doc:${randomBytes(32).toString('base64')}`, ...process.env };
const build = process.argv.includes('--admin') ? buildAdminOpenApi : buildOpenApi;
process.stdout.write(`${JSON.stringify(build(loadApiConfig(env)), null, 2)}\n`);
