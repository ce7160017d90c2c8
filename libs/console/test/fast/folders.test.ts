import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The console's folders mirror the API's capabilities (issue 82): a newcomer who knows
 * `services/api/src/features/<capability>/` finds its screens under `libs/console/src/<capability>/`.
 * Besides them only the kit (what every screen shares) and the sign-in (`session/`, as the API's
 * `http/session/`) have folders of their own.
 */
const folders = (url: URL) =>
  readdirSync(fileURLToPath(url), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
const CONSOLE = folders(new URL('../../src/', import.meta.url));
const FEATURES = folders(new URL('../../../../services/api/src/features/', import.meta.url));
const NOT_A_CAPABILITY = ['kit', 'session'];
/**
 * Capabilities whose screens are parts of another's page, driven by that page's suite: the
 * activity chart (the Batches page), a device's channels (one suite with its statuses), the
 * workspace's users (the Workspaces suite), the device list and page (the journey through the
 * console, the every-page sweep), the webhook's view (the Events tab).
 */
const DRIVEN_ELSEWHERE: Record<string, string> = {
  activity: 'src/batches/e2e/batches.test.ts',
  channels: 'src/statuses/e2e/statuses-channels.test.ts',
  console: 'src/workspaces/e2e/workspaces.test.ts',
  devices: 'test/journey.test.ts',
  webhooks: 'src/events/e2e/events.test.ts',
};

describe("console: one folder per capability, named as the API's features/", () => {
  it('When the console has a folder, then the API has a capability of that name (or it is the kit or the sign-in)', () => {
    const strays = CONSOLE.filter((f) => !NOT_A_CAPABILITY.includes(f) && !FEATURES.includes(f));
    expect(strays, 'console folders that name no API capability').to.deep.equal([]);
    expect(FEATURES, 'the API has no folder named as the kit or the sign-in').not.to.include.members(
      NOT_A_CAPABILITY,
    );
  });

  it('When a capability folder has screens, then its browser suite is beside them (e2e/), or the table below names the suite that drives them', () => {
    for (const f of CONSOLE.filter((c) => !NOT_A_CAPABILITY.includes(c))) {
      const here = readdirSync(fileURLToPath(new URL(`../../src/${f}/`, import.meta.url)));
      expect(
        here.some((n) => n.endsWith('.tsx')),
        `${f} holds a screen`,
      ).to.equal(true);
      const elsewhere = DRIVEN_ELSEWHERE[f];
      if (here.includes('e2e')) {
        expect(elsewhere, `${f} has e2e/: drop it from DRIVEN_ELSEWHERE`).to.equal(undefined);
        continue;
      }
      expect(elsewhere, `${f}: no e2e/ and no suite named in DRIVEN_ELSEWHERE`).to.be.a('string');
      expect(existsSync(fileURLToPath(new URL(`../../${elsewhere}`, import.meta.url))), elsewhere).to.equal(
        true,
      );
    }
  });
});
