import { expect } from 'chai';
import { waitFor, type Stack } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowingInTables as overflowing } from '../../../test/overflow.js';

describe('Dashboard: a device’s Statuses and Channels tabs — post a status and see who viewed it, contacts’ statuses, a channel created and posted to (chromium, whole stack, simulator)', function () {
  this.timeout(300_000);

  interface SimStatus {
    id: string;
    poster: string;
    text?: string;
    audience: string[];
    readBy: string[];
    deleted?: true;
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552730001';
  const [ana, ben] = ['15552730011', '15552730012'];

  const simStatuses = (s: Stack) =>
    s.simApi<{ statuses: SimStatus[] }>('GET', `/statuses/${ACCOUNT}`).then((r) => r.statuses);

  it('When the operator posts a status from the Statuses tab, then the contacts receive it, a view shows its viewer on the page, a contact’s own status shows, and the delete reaches them', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Status Shop');
    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/statuses`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Post a status' }).waitFor({ timeout: 15_000 });
    await page.getByText('No status in the last 24 hours').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('link', { name: 'Statuses' }).getAttribute('aria-current')).to.equal('page');
    expect(await audit(page, 'statuses-empty')).to.deep.equal([]);

    await page.getByLabel('Status text').fill('Open until 20:00 today');
    await page.getByLabel('Font').selectOption('calistoga');
    await page.getByLabel(/Viewers' numbers/).fill(`+${ana}, ${ben}`);
    await page.getByRole('button', { name: 'Post status' }).click();
    await page.getByText('Status queued for 2 viewers.').waitFor({ timeout: 15_000 });

    // The contacts' phones decrypt it.
    let received: SimStatus | undefined;
    await waitFor(
      async () =>
        (received = (await simStatuses(stack)).find((s) => s.text === 'Open until 20:00 today'))?.readBy
          .length === 2,
      { timeoutMs: 60_000, what: 'both contacts get the status' },
    );
    expect(received!.audience).to.have.members([ana, ben]);

    // Ana opens it: the page shows her as its viewer.
    await stack.simApi('POST', `/statuses/${received!.id}/view`, { viewers: [ana] });
    const row = page.getByTestId(/^status-row-/).filter({ hasText: 'Open until 20:00 today' });
    await row.getByText('1 of 2 viewed').waitFor({ timeout: 30_000 });
    await row.getByRole('list', { name: 'Viewed by' }).getByText(`+${ana}`).waitFor();
    expect(await row.getByText('Sent', { exact: true }).count()).to.equal(1);

    // A contact's own status, once the device takes them.
    await page.getByLabel(/Receive contacts' statuses/).check();
    await waitFor(
      async () =>
        (await stack.api<{ data: { receiveStatuses: boolean } }>('GET', '/statuses/settings')).body.data
          .receiveStatuses,
      { timeoutMs: 10_000, what: 'the setting saved' },
    );
    await stack.simApi('POST', `/contacts/${ben}/status`, { text: 'Back from holidays', viewers: [ACCOUNT] });
    const theirs = page.getByTestId('contact-status').filter({ hasText: 'Back from holidays' });
    await theirs.waitFor({ timeout: 30_000 });
    expect(await theirs.innerText()).to.include(`+${ben}`);

    await screenshots(page, 'statuses-page');
    expect(await overflowing(page, '.statuses-page')).to.deep.equal([]);
    expect(await audit(page, 'statuses-page')).to.deep.equal([]);

    // Delete: a Confirm dialog, then the revoke reaches the contacts.
    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this status?' });
    await dialog.waitFor();
    expect(await audit(page, 'statuses-delete-dialog')).to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Delete status' }).click();
    await page.getByText('Deleting: the revoke goes').waitFor({ timeout: 15_000 });
    await waitFor(
      async () => (await simStatuses(stack)).find((s) => s.id === received!.id)?.deleted === true,
      {
        timeoutMs: 60_000,
        what: 'the contacts see it deleted',
      },
    );
  });

  it('When a status is scheduled from the page, then it is listed as scheduled and nothing reaches the contacts', async () => {
    const { stack, page } = dashboard();
    await page.getByLabel('Picture', { exact: true }).check();
    await page.getByLabel('Picture URL').fill('https://example.com/menu.jpg');
    await page.getByLabel('Caption (optional)').fill('Tomorrow’s menu');
    await page.getByLabel(/Viewers' numbers/).fill(ana);
    await page.getByLabel('Later').check();
    // Two days ahead, as the datetime field takes it (local time, to the minute).
    const due = new Date(Date.now() + 2 * 86_400_000);
    const local = new Date(due.getTime() - due.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Send at (your local time)').fill(local);
    await page.getByRole('button', { name: 'Schedule status' }).click();
    await page.getByText(/Status scheduled for/).waitFor({ timeout: 15_000 });
    const listed = await stack.api<{
      data: { statuses: { status: string; kind: string; sendAt?: string }[] };
    }>('GET', '/statuses');
    const scheduled = listed.body.data.statuses.find((s) => s.status === 'scheduled');
    expect(scheduled).to.deep.include({ kind: 'image' });
    expect(Math.abs(Date.parse(scheduled!.sendAt!) - due.getTime())).to.be.below(60_000);
    await page
      .getByTestId(/^status-row-/)
      .filter({ hasText: 'Tomorrow’s menu' })
      .getByText('Scheduled')
      .waitFor({
        timeout: 15_000,
      });
    expect((await simStatuses(stack)).some((s) => s.text === 'Tomorrow’s menu')).to.equal(false);
  });

  it('When the operator creates a channel from the Channels tab and posts to it, then the simulator has the channel and the post, and the page lists the post', async () => {
    const { stack, page } = dashboard();
    await page.getByRole('link', { name: 'Channels' }).click();
    await page.getByRole('heading', { name: 'Create a channel' }).waitFor({ timeout: 15_000 });
    await page.getByText('No channel yet').waitFor({ timeout: 15_000 });
    expect(await audit(page, 'channels-empty')).to.deep.equal([]);

    const create = page.getByRole('region', { name: 'Create a channel' });
    await create.getByLabel('Name').fill('Spring Sale News');
    await create.getByLabel('Description (optional)').fill('Offers every Monday');
    await create.getByRole('button', { name: 'Create channel' }).click();
    await page.getByText('Channel "Spring Sale News" created.').waitFor({ timeout: 30_000 });
    const listed = await stack.api<{ data: { channels: { id: string; role: string }[] } }>(
      'GET',
      '/channels',
    );
    const channelId = listed.body.data.channels[0]!.id;
    expect(listed.body.data.channels[0]!.role).to.equal('owner');
    const sim = await stack.simApi<{ owner: string; name: string }>('GET', `/newsletters/${channelId}`);
    expect(sim).to.include({ owner: ACCOUNT, name: 'Spring Sale News' });
    const row = page.getByTestId(`channel-${channelId}`);
    await row.getByText('Owner').waitFor();
    await row.getByRole('cell', { name: '0', exact: true }).waitFor({ timeout: 15_000 });

    const panel = page.getByTestId('channel-panel');
    await panel.getByRole('heading', { name: 'Post to the channel' }).waitFor({ timeout: 30_000 });
    await panel.getByLabel('Text', { exact: true }).fill('Doors open at 9');
    await panel.getByRole('button', { name: 'Post', exact: true }).click();
    await waitFor(
      async () =>
        (
          await stack.simApi<{ posts: { text?: string }[] }>('GET', `/newsletters/${channelId}/posts`)
        ).posts.some((p) => p.text === 'Doors open at 9'),
      { timeoutMs: 60_000, what: 'the post in the channel' },
    );
    const post = panel.getByTestId('channel-posts').getByRole('row').filter({ hasText: 'Doors open at 9' });
    await post.waitFor({ timeout: 30_000 });
    expect(await post.getByRole('cell').nth(2).innerText()).to.equal('0');

    await screenshots(page, 'channels-page');
    expect(await overflowing(page, '.channels-page')).to.deep.equal([]);
    expect(await audit(page, 'channels-page')).to.deep.equal([]);

    // Deleting asks first (the dialog is audited), then the channel is gone from WhatsApp.
    await panel.getByRole('button', { name: 'Delete channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Spring Sale News?' });
    await dialog.waitFor();
    expect(await audit(page, 'channels-delete-dialog')).to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Delete channel' }).click();
    await page.getByText('No channel yet').waitFor({ timeout: 30_000 });
    const gone = await stack.api('GET', `/channels/${channelId}`);
    expect(gone.status).to.equal(404);
  });
});
