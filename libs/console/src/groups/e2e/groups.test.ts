import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowingInTables as overflowing } from '../../../test/overflow.js';

describe('Dashboard: a device’s Groups tab — create, rename, members, invite link, join, leave (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  interface SimGroupView {
    id: string;
    subject: string;
    description?: string;
    participants: { phone: string; role: string }[];
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552720001';
  const [ana, ben, cai] = ['15552720011', '15552720012', '15552720013'];

  it('When the operator creates a group from the page, renames it, adds and removes a member, copies the invite link, joins another by link and leaves one, then the simulator’s groups follow each step', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Groups Shop');
    for (const [phone, name] of [
      [ana, 'Ana'],
      [ben, 'Ben'],
      [cai, 'Cai'],
    ])
      await stack.simApi('POST', '/contacts', { phone, name });
    const simGroup = (id: string) => stack.simApi<SimGroupView>('GET', `/groups/${id}`);
    const phonesOf = async (id: string) => (await simGroup(id)).participants.map((p) => p.phone).sort();

    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.apiUrl });
    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/groups`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Groups', exact: true }).waitFor();
    expect(
      await page.getByRole('link', { name: 'Groups', exact: true }).getAttribute('aria-current'),
    ).to.equal('page');
    await page.getByText('This account is in no group yet').waitFor({ timeout: 30_000 });
    await screenshots(page, 'groups-empty');
    expect(await audit(page, 'groups-empty')).to.deep.equal([]);

    // Create a group with two contacts: the page opens it.
    await page.getByLabel('Subject', { exact: true }).fill('Launch crew');
    await page.getByLabel('Members', { exact: true }).fill(`+${ana}\n${ben}`);
    await page.getByRole('button', { name: 'Create group' }).click();
    const detail = page.getByTestId('group-detail');
    await detail.getByRole('heading', { name: 'Launch crew' }).waitFor({ timeout: 30_000 });
    const gid = new URL(page.url()).searchParams.get('group')!;
    expect(gid).to.match(/@g\.us$/);
    expect(await phonesOf(gid)).to.deep.equal([ACCOUNT, ana, ben].sort());
    expect((await simGroup(gid)).participants.find((p) => p.phone === ACCOUNT)?.role).to.equal('superadmin');
    await page.getByTestId(`member-${ACCOUNT}`).getByText('You').waitFor();

    // Rename it (a subject of either script) and describe it.
    const subject = 'Launch crew · فريق الإطلاق';
    await detail.getByLabel('Subject', { exact: true }).fill(subject);
    await detail.getByLabel('Description', { exact: true }).fill('Release night, 8 pm');
    await detail.getByRole('button', { name: 'Save changes' }).click();
    await detail.getByText('Saved: the members see the change.').waitFor({ timeout: 30_000 });
    expect(await simGroup(gid)).to.include({ subject, description: 'Release night, 8 pm' });
    await detail.getByRole('heading', { name: subject }).waitFor();

    // Add a member, then remove another (after the Confirm).
    await detail.getByLabel('Add members').fill(cai);
    await detail.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByTestId('member-outcomes').getByText('added').waitFor({ timeout: 30_000 });
    await page.getByTestId(`member-${cai}`).waitFor({ timeout: 15_000 });
    expect(await phonesOf(gid)).to.include(cai);
    await detail.getByRole('button', { name: `Remove +${ben}` }).click();
    const removeDialog = page.getByRole('dialog', { name: 'Remove this member?' });
    await removeDialog.waitFor();
    expect(await audit(page, 'groups-remove-dialog')).to.deep.equal([]);
    await removeDialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByTestId(`member-${ben}`).waitFor({ state: 'detached', timeout: 30_000 });
    expect(await phonesOf(gid)).to.deep.equal([ACCOUNT, ana, cai].sort());
    // Make Ana an admin: the simulator's group says so.
    await detail.getByRole('button', { name: `Make admin +${ana}` }).click();
    await detail.getByRole('button', { name: `Demote +${ana}` }).waitFor({ timeout: 30_000 });
    expect((await simGroup(gid)).participants.find((p) => p.phone === ana)?.role).to.equal('admin');

    // The invite link: shown, the same as the public API's, copied.
    await detail.getByRole('button', { name: 'Show invite link' }).click();
    const shown = await page.getByTestId('invite-link').innerText();
    const invite = await stack.api<{ data: { invite: { link: string; code: string } } }>(
      'GET',
      `/groups/${gid}/invite`,
    );
    expect(shown).to.equal(invite.body.data.invite.link);
    await detail.getByRole('button', { name: 'Copy link' }).click();
    await detail.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(shown);
    // A contact joins by it.
    await stack.simApi('POST', '/groups/join', { phone: ben, code: invite.body.data.invite.code });
    expect(await phonesOf(gid)).to.include(ben);
    // The page hears of it (a group.updated event) and reads the group again.
    await page.getByTestId(`member-${ben}`).waitFor({ timeout: 30_000 });
    await screenshots(page, 'groups-detail');
    expect(await audit(page, 'groups-detail')).to.deep.equal([]);
    expect(await overflowing(page, '.groups-page, .group-detail')).to.deep.equal([]);

    // Revoke it (after the Confirm): a new link, the old code no longer works.
    await detail.getByRole('button', { name: 'Revoke link' }).click();
    const revokeDialog = page.getByRole('dialog', { name: 'Revoke the invite link?' });
    await revokeDialog.waitFor();
    expect(await audit(page, 'groups-revoke-dialog')).to.deep.equal([]);
    await revokeDialog.getByRole('button', { name: 'Revoke link' }).click();
    await detail.getByText('A new link replaces the old one').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('invite-link').innerText()).not.to.equal(shown);
    let refused = '';
    await stack
      .simApi('POST', '/groups/join', { phone: '15552720014', code: invite.body.data.invite.code })
      .catch((err: Error) => (refused = err.message));
    expect(refused).to.include('410');

    // Back to the list: the group is there, its subject whole.
    await detail.getByRole('button', { name: '← All groups' }).click();
    const row = page.getByTestId(`group-${gid}`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.innerText()).to.include(subject);

    // Join someone else's group by its link: the page opens it (the account a plain member there).
    const theirs = await stack.simApi<SimGroupView>('POST', '/groups', {
      subject: 'Their club',
      members: [ana, cai],
    });
    const link = await stack.simApi<{ code: string }>('POST', `/groups/${theirs.id}/invite`, { by: ana });
    await page.getByLabel('Invite link or code').fill(`https://chat.whatsapp.com/${link.code}`);
    await page.getByRole('button', { name: 'Join group' }).click();
    await detail.getByRole('heading', { name: 'Their club' }).waitFor({ timeout: 30_000 });
    expect(await phonesOf(theirs.id)).to.include(ACCOUNT);
    await page.getByTestId('invite-not-admin').waitFor();
    await page.getByTestId('members-not-admin').waitFor();
    await screenshots(page, 'groups-member-view');
    expect(await audit(page, 'groups-member-view')).to.deep.equal([]);

    // Leave it (after the Confirm): back on the list, without it.
    await detail.getByRole('button', { name: 'Leave group' }).click();
    const leaveDialog = page.getByRole('dialog', { name: 'Leave this group?' });
    await leaveDialog.waitFor();
    expect(await audit(page, 'groups-leave-dialog')).to.deep.equal([]);
    await screenshots(page, 'groups-leave-dialog');
    await leaveDialog.getByRole('button', { name: 'Leave group' }).click();
    await page.getByText('The account left').waitFor({ timeout: 30_000 });
    expect(await phonesOf(theirs.id)).not.to.include(ACCOUNT);
    await waitFor(async () => (await page.getByTestId(`group-${theirs.id}`).count()) === 0, {
      timeoutMs: 30_000,
      what: 'the left group gone from the list',
    });
    await row.waitFor();
    await screenshots(page, 'groups-list');
    expect(await audit(page, 'groups-list')).to.deep.equal([]);
    expect(await overflowing(page, '.groups-page, .group-detail')).to.deep.equal([]);
  });
});
