import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import {
  ADMIN_PASSWORD as PASSWORD,
  VIEWPORTS,
  screenshots,
  useDashboardStack,
} from '../../../test/browser.js';

describe('Dashboard: every kind of message shown as what it is on the Messages page (chromium, whole stack, simulator)', function () {
  this.timeout(180_000);

  interface Record {
    status: string;
    deletedAt?: string;
    edits?: unknown[];
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15551910001';
  const ana = '15551910011';

  it('When a status is deleted, a channel post edited, a text gets a reaction and an edit, then Messages names each kind (Status, Channel post, Message; the edit and the delete by where they went, each with what it changes), shows the edited and deleted ones so, and lists no status of a contact as a message, at 1366 and 390 px', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Kinds Shop');
    await stack.simApi('POST', `/contacts/${ana}/send`, { to: ACCOUNT, text: 'Are you open today?' });
    const record = async (id: string) =>
      (await stack.api<{ data: Record }>('GET', `/messages/${id}`)).body.data;
    const settled = (id: string, what: string, done = (r: Record) => r.status !== 'queued') =>
      waitFor(async () => done(await record(id)), { timeoutMs: 60_000, what });

    // A status of the account, then its delete.
    const status = await stack.api<{ data: { messageId: string } }>('POST', '/statuses', {
      text: 'Open until 20:00 today',
      audience: [ana],
    });
    expect(status.status, JSON.stringify(status.body)).to.equal(202);
    const statusId = status.body.data.messageId;
    await settled(statusId, 'the status sent');
    const del = await stack.api('DELETE', `/statuses/${statusId}`);
    expect(del.status, JSON.stringify(del.body)).to.be.oneOf([200, 202]);
    await settled(statusId, 'the status deleted', (r) => r.status === 'deleted');

    // A channel post, then its edit.
    const made = await stack.api<{ data: { channel: { id: string } } }>('POST', '/channels', {
      name: 'Kinds News',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const channelId = made.body.data.channel.id;
    const post = await stack.api<{ data: { messageId: string } }>('POST', `/channels/${channelId}/posts`, {
      text: 'Doors open at 9 on Saturday',
    });
    expect(post.status, JSON.stringify(post.body)).to.equal(202);
    const postId = post.body.data.messageId;
    await settled(postId, 'the post sent');
    const edit = await stack.api('PATCH', `/channels/${channelId}/posts/${postId}`, {
      text: 'Doors open at 10 on Saturday',
    });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(202);
    await settled(postId, 'the post edited', (r) => (r.edits?.length ?? 0) > 0);

    // A contact's status the account receives.
    const set = await stack.api('PUT', '/statuses/settings', { receiveStatuses: true });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    await stack.simApi('POST', `/contacts/${ana}/status`, { text: 'Back from holidays', viewers: [ACCOUNT] });

    // An ordinary text, a reaction to it and an edit of it.
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      text: 'Yes, until 20:00',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const textId = sent.body.messageId;
    await settled(textId, 'the text sent');
    const reacted = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      reaction: { messageId: textId, emoji: '👍' },
    });
    expect(reacted.status, JSON.stringify(reacted.body)).to.equal(202);
    const edited = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      edit: { messageId: textId, text: 'Yes, until 21:00' },
    });
    expect(edited.status, JSON.stringify(edited.body)).to.equal(202);
    await settled(textId, 'the text edited', (r) => (r.edits?.length ?? 0) > 0);

    await page.goto(`${stack.apiUrl}/dashboard/messages?device=${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = (id: string) => page.getByTestId(`message-${id}`);
    await row(postId).waitFor({ timeout: 15_000 });
    // The contact's status arrived (its event), and is no message of a chat on the page.
    await waitFor(
      async () =>
        (await stack.api<{ data: { events: { type: string }[] } }>('GET', '/events?types=status.received'))
          .body.data.events.length === 1,
      { timeoutMs: 20_000, what: "the contact's status received" },
    );

    // What the page lists, as the admin API gives it: each row's record.
    const listed = await page.evaluate(
      async ([device]) => {
        const res = await fetch(`/api/admin/v1/devices/${device}/messages?limit=100&direction=all`);
        return ((await res.json()) as { messages: { messageId: string; to?: string }[] }).messages;
      },
      [stack.deviceId],
    );
    // The edit of the post and the delete of the status: messages of their own, to the same chats.
    const postEdit = listed.find((m) => m.to === channelId && m.messageId !== postId)!;
    const statusDelete = listed.find((m) => m.to === 'status@broadcast' && m.messageId !== statusId)!;
    expect(postEdit, JSON.stringify(listed)).to.exist;
    expect(statusDelete, JSON.stringify(listed)).to.exist;
    await screenshots(page, 'message-kinds');

    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const kind = async (id: string) => (await row(id).locator('[data-label="Kind"]').innerText()).trim();
      const content = (id: string) => row(id).locator('.msg-content').innerText();
      expect(await kind(statusId), label).to.equal('Status');
      expect(await kind(statusDelete.messageId), label).to.equal('Status');
      expect(await kind(postId), label).to.equal('Channel post');
      expect(await kind(postEdit.messageId), label).to.equal('Channel post');
      expect(await kind(textId), label).to.equal('Message');
      // The delete and the edit name what they change (the target's short id, the edit's text).
      expect(await content(statusDelete.messageId), label).to.match(
        new RegExp(`^Delete\\s+of ${statusId.slice(0, 8)}$`, 'i'),
      );
      expect(await content(postEdit.messageId), label).to.match(
        new RegExp(`^Edit\\s+of ${postId.slice(0, 8)}: Doors open at 10 on Saturday$`, 'i'),
      );
      expect(await page.getByText('Back from holidays').count(), label).to.equal(0);
      // The status reads deleted.
      expect(await content(statusId), label).to.match(/^Deleted/i);
      // The post reads its new text, edited.
      const post = await content(postId);
      expect(post, label).to.include('Doors open at 10 on Saturday');
      expect(post, label).to.match(/edited/);
      expect(await content(textId), label).to.match(/Yes, until 21:00[\s\S]*edited/);
      expect(await page.locator('.msg-content[data-kind="reaction"]').innerText(), label).to.include('👍');
    }
  });
});
