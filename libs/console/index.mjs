/**
 * Where `npm run build` puts the built console (index.html and assets/): what the API serves at
 * /dashboard unless DASHBOARD_ASSETS_DIR names another build. Plain JavaScript, so that the API
 * finds it without building this package's sources.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BUILT_CONSOLE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dist');
