import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowing } from '../../../test/overflow.js';

describe('Dashboard: the inbox answers with an attachment and a reaction, and a group chat names who wrote (chromium, whole stack, simulator)', function () {
  this.timeout(300_000);

  /** A message as the simulator's contact received it (GET /inbox/:phone). */
  interface Arrived {
    id: string;
    type: string;
    caption?: string;
    fileName?: string;
    mimetype?: string;
    fileLength?: number;
    emoji?: string;
    targetId?: string;
  }

  /** A 1×1 PNG. */
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  );

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552910001';
  const [ana, ben] = ['15552910011', '15552910012'];
  let dir = '';

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-compose-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('When the operator attaches an image with a caption, reacts 👍 to the contact’s message and removes it, then the contact gets each; a file over 10 MB is refused before upload; a group bubble names its author', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Compose Shop');
    const arrived = async (who: string, what: string, test: (m: Arrived) => boolean) => {
      let found: Arrived | undefined;
      await waitFor(async () => !!(found = ((await stack.inbox(who)) as Arrived[]).find(test)), {
        timeoutMs: 60_000,
        what,
      });
      return found!;
    };
    const wrote = await stack.simApi<{ id: string }>('POST', `/contacts/${ana}/send`, {
      to: ACCOUNT,
      text: 'Do you have it in blue?',
    });
    const group = await stack.simApi<{ id: string }>('POST', '/groups', {
      subject: 'Shop team',
      members: [ben, ACCOUNT],
    });
    await stack.simApi('POST', `/groups/${group.id}/send`, { from: ben, text: 'Who opens tomorrow?' });
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length >=
        2,
      { timeoutMs: 20_000, what: 'both chats' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}&chat=${ana}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const pane = page.getByRole('region', { name: /Messages of/ });
    const theirs = pane.locator('.bubble-in', { hasText: 'Do you have it in blue?' });
    await theirs.waitFor({ timeout: 15_000 });

    // A file over the limit is refused on the page, saying the limit; nothing is chosen.
    const attach = pane.getByLabel('Attach');
    // From a (sparse) file on disk: a 12 MB buffer travels base64 through the browser's pipe,
    // past 30 s on a loaded machine, where a path is handed to chromium as it is.
    const tour = path.join(dir, 'tour.mp4');
    await writeFile(tour, '');
    await truncate(tour, 12 * 1024 * 1024);
    await attach.setInputFiles(tour);
    await pane.getByText('“tour.mp4” is 12 MB: an attachment may be at most 10 MB.').waitFor();
    expect(await pane.getByTestId('chat-attachment').count()).to.equal(0);

    // Chosen, shown with its size, removed, chosen again.
    const file = path.join(dir, 'blue-jacket.png');
    await writeFile(file, PNG);
    await attach.setInputFiles(file);
    const chip = pane.getByTestId('chat-attachment');
    await chip.waitFor();
    expect(await chip.innerText()).to.match(
      new RegExp(`^image\\s+blue-jacket\\.png\\s+${PNG.length} B`, 'i'),
    );
    expect(await pane.getByText('“tour.mp4”').count(), 'the old refusal gone').to.equal(0);
    await chip.getByRole('button', { name: 'Remove the attachment blue-jacket.png' }).click();
    expect(await chip.count()).to.equal(0);
    expect(await pane.getByLabel('Reply').count()).to.equal(1);
    await attach.setInputFiles(file);
    const caption = pane.getByLabel('Caption (optional)');
    await caption.fill('Here it is in blue');
    await screenshots(page, 'inbox-compose-attachment');
    await pane.getByRole('button', { name: 'Send' }).click();
    await waitFor(async () => (await chip.count()) === 0, { timeoutMs: 15_000, what: 'the file sent' });
    const image = await arrived(ana, 'the image', (m) => m.type === 'image');
    expect(image).to.include({
      caption: 'Here it is in blue',
      fileLength: PNG.length,
      mimetype: 'image/png',
    });
    await pane.locator('.bubble-out', { hasText: 'Here it is in blue' }).waitFor({ timeout: 30_000 });

    // React 👍 to the contact's message: the menu, keyboard reachable and named.
    const react = theirs.getByRole('button', { name: 'React to this message' });
    await react.focus();
    await page.keyboard.press('Enter');
    const menu = theirs.getByRole('group', { name: 'Reactions to choose' });
    await menu.waitFor();
    expect(await menu.getByRole('button').count(), 'six emoji, no "Remove" yet').to.equal(6);
    expect(await audit(page, 'inbox-compose-react-menu')).to.deep.equal([]);
    expect(await overflowing(page)).to.deep.equal([]);
    await screenshots(page, 'inbox-compose-react-menu');
    await page.keyboard.press('Escape');
    expect(await menu.count()).to.equal(0);
    await react.click();
    await menu.getByRole('button', { name: 'React with thumbs up' }).click();
    await arrived(
      ana,
      'the reaction',
      (m) => m.type === 'reaction' && m.emoji === '👍' && m.targetId === wrote.id,
    );
    // Shown on the bubble once recorded (sent: no longer pending).
    const mine = theirs.getByTestId('my-reaction');
    await waitFor(
      async () =>
        (await theirs.getAttribute('data-my-reaction')) === '👍' &&
        (await mine.getAttribute('data-pending')) === null,
      { timeoutMs: 30_000, what: 'the reaction on the bubble' },
    );
    expect(await mine.innerText()).to.include('Your reaction: thumbs up');
    // No bubble of its own.
    expect(await pane.locator('.msg-content[data-kind="reaction"]').count()).to.equal(0);
    await screenshots(page, 'inbox-compose-reacted');

    // Removed: the contact gets "" on the same message, the bubble shows none.
    await react.click();
    await menu.getByRole('button', { name: 'React with thumbs up' }).waitFor();
    expect(
      await menu.getByRole('button', { name: 'React with thumbs up' }).getAttribute('aria-pressed'),
    ).to.equal('true');
    await menu.getByRole('button', { name: 'Remove reaction' }).click();
    await arrived(
      ana,
      'the removal',
      (m) => m.type === 'reaction' && m.emoji === '' && m.targetId === wrote.id,
    );
    await waitFor(async () => (await theirs.getAttribute('data-my-reaction')) === null, {
      timeoutMs: 30_000,
      what: 'the reaction gone from the bubble',
    });
    expect(await mine.count()).to.equal(0);

    // A group chat: the member's message names its author.
    await page.getByTestId(`chat-${group.id}`).click();
    const inGroup = pane.locator('.bubble-in', { hasText: 'Who opens tomorrow?' });
    await inGroup.waitFor({ timeout: 30_000 });
    expect(await inGroup.getByTestId('bubble-author').innerText()).to.equal(`+${ben}`);
    expect(await inGroup.getByRole('button', { name: 'React to this message' }).count()).to.equal(1);
    expect(await overflowing(page)).to.deep.equal([]);
    await screenshots(page, 'inbox-compose-group');
  });
});
