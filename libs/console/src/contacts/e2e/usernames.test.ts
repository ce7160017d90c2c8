import { expect } from 'chai';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowing } from '../../../test/overflow.js';

describe("Dashboard: a WhatsApp username looked up from the device's settings (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  const dashboard = useDashboardStack(this);
  const account = '15552520001';
  const guarded = '15552520002';

  it('When the operator looks up a username guarded by a PIN, then the page asks for its PIN, with it shows the LID and number, and a broken one shows the rule; a send may then name it', async () => {
    const { stack, page } = dashboard();
    const contact = await stack.simApi<{ lid: string }>('POST', '/contacts', {
      phone: guarded,
      username: 'garden.shop',
      usernamePin: '2468',
    });
    await stack.linkByQr(account, 'Username Shop');

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Usernames' });
    await section.getByLabel('Username').fill('@Garden.Shop');
    await section.getByRole('button', { name: 'Look up username' }).click();
    await section
      .getByText('@garden.shop is guarded by a PIN: enter its 4 digits and look it up again.')
      .waitFor();
    const result = section.getByTestId('username-result');
    expect(await result.innerText()).to.include('Needs its PIN');

    await section.getByLabel('PIN (if it has one)').fill('2468');
    await section.getByRole('button', { name: 'Look up username' }).click();
    await section.getByText('@garden.shop found: sends may name it as @garden.shop.').waitFor();
    const shown = await result.innerText();
    expect(shown).to.include('Found');
    expect(shown).to.include(`${contact.lid}@lid`);
    expect(shown).to.include(`+${guarded}`);
    expect(
      await section.getByLabel('PIN (if it has one)').inputValue(),
      'the PIN is not kept on the page',
    ).to.equal('');

    // The device remembers it: a send names it without its PIN.
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: '@garden.shop',
      text: 'from the dashboard',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);

    await section.getByLabel('Username').fill('shop.com');
    await section.getByRole('button', { name: 'Look up username' }).click();
    await section.getByText(/Could not look the username up: .*rule: domain_suffix/).waitFor();

    await section.scrollIntoViewIfNeeded();
    await screenshots(page, 'username-section');
    expect(await audit(page, 'username section')).to.deep.equal([]);
    expect(await overflowing(page)).to.deep.equal([]);
  });
});
