import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowing } from '../../../test/overflow.js';

describe("Dashboard: the account's presence and its contacts' from the device's settings (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  const dashboard = useDashboardStack(this);
  const account = '15552510001';
  const friend = '15552510011';

  it('When the operator shows the account online, watches a contact and looks up its profile, then WhatsApp sees the account online and the contact going online and typing shows live', async () => {
    const { stack, page } = dashboard();
    await stack.simApi('POST', '/contacts', { phone: friend });
    await stack.linkByQr(account, 'Presence Shop');
    const simOnline = async () =>
      (await stack.simApi<{ online: boolean }>('GET', `/accounts/${account}/profile`)).online;

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Presence' });
    await section.getByTestId('presence-empty').waitFor();
    expect(await simOnline()).to.equal(false);

    await section.getByRole('button', { name: 'Show as online' }).click();
    await section.getByText('The account shows as online.').waitFor();
    await waitFor(simOnline, { timeoutMs: 10_000, what: 'the account online at WhatsApp' });

    await section.getByLabel('Contact (number or LID)').fill(friend);
    await section.getByRole('button', { name: 'Watch presence' }).click();
    const row = section.getByTestId(`presence-${friend}`);
    await row.waitFor();
    // The subscription's first answer: offline, never seen.
    await row.getByText('Offline').waitFor({ timeout: 10_000 });
    const drive = (body: Record<string, unknown>) =>
      stack.simApi<{ delivered: number }>('POST', `/contacts/${friend}/presence`, body);
    expect((await drive({ presence: 'available' })).delivered).to.equal(1);
    await row.getByText('Online').waitFor({ timeout: 10_000 });
    expect((await drive({ presence: 'composing', to: account })).delivered).to.equal(1);
    await row.getByText('Typing…').waitFor({ timeout: 10_000 });
    expect(await row.locator('td').first().innerText()).to.equal(`+${friend}`);

    await section.getByRole('button', { name: 'Look up profile' }).click();
    const profile = section.getByTestId('contact-profile');
    await profile.waitFor({ timeout: 10_000 });
    expect(await profile.innerText()).to.include(`+${friend}`);

    await section.getByRole('button', { name: 'Show as offline' }).click();
    await section.getByText('The account shows as offline.').waitFor();
    await waitFor(async () => !(await simOnline()), { timeoutMs: 10_000, what: 'the account offline' });

    // A number that is none: the API's message, on the page.
    await section.getByLabel('Contact (number or LID)').fill('12ab');
    await section.getByRole('button', { name: 'Watch presence' }).click();
    await section.getByText(/Could not watch the contact: /).waitFor();

    await section.scrollIntoViewIfNeeded();
    await screenshots(page, 'presence-section');
    expect(await audit(page, 'presence section')).to.deep.equal([]);
    expect(await overflowing(page)).to.deep.equal([]);
  });
});
