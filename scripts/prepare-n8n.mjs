/**
 * Installs what the n8n tests (test/integrations/n8n*.test.ts) start, before mocha does: n8n from
 * the npm registry into the cache (~/.cache/messenger-gateway, once per version, minutes and about
 * 3 GB on a cold machine) and integrations/n8n's tooling, its package built and packed. `npm test`
 * runs it ahead of the parallel suite, so that an install never competes for the cores with tests
 * that wait on timers; when everything is in place it answers in about a second.
 *
 * As a command: exits 1 with the reason when a step fails (the tests would fail with it too).
 */
import { ensureN8n, packN8nNodes, N8N_VERSION } from '@mgw/testing/n8n-install';

const started = Date.now();
try {
  const install = await ensureN8n();
  await packN8nNodes();
  const seconds = Math.round((Date.now() - started) / 1000);
  if (seconds > 5) console.log(`n8n ${N8N_VERSION} ready in ${install.dir} (${seconds} s)`);
} catch (err) {
  console.error(`prepare-n8n: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
