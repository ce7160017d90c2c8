import { useEffect, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { ago, exact } from '../kit/format';
import { Banner, Card, Confirm, Empty, Spinner } from '../kit/ui';
import { ChannelPanel, channelFields, type Channel } from './channel-panel';
import './channels.css';
import { useCanChange } from '../kit/session';
import { RowButton, TableHead } from '../kit/table';

/** A row of GET /channels: a channel the device created or followed through the gateway. */
interface ChannelEntry {
  id: string;
  name: string;
  role: 'owner' | 'follower';
  since: string;
}

/** Where an outcome shows: next to what was done (the list's Unfollow, the Create form, the Follow form). */
type Where = 'list' | 'create' | 'follow';
type Notice = { kind: 'error' | 'success'; text: string; where: Where } | undefined;

/** The channel's path under the device: an id, or an invite link or code (encoded). */
export const channelPath = (deviceId: string, key: string) =>
  `/devices/${encodeURIComponent(deviceId)}/channels/${encodeURIComponent(key)}`;

/**
 * The Channels tab of a device: the channels it created or follows (GET /devices/:deviceId/channels,
 * the public GET /channels) with their followers as WhatsApp counts them (GET …/channels/:id, one
 * ask of the device each), create one, follow one by its id or invite; a channel opened below
 * (channel-panel.tsx) is edited, posted to, unfollowed or deleted there.
 */
export function ChannelsPage(props: { deviceId: string }) {
  const can = useCanChange();
  const base = `/devices/${encodeURIComponent(props.deviceId)}/channels`;
  const [list, setList] = useState<ChannelEntry[] | undefined>(undefined);
  const [details, setDetails] = useState<Record<string, Channel | null>>({});
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  const [leaving, setLeaving] = useState<ChannelEntry | undefined>(undefined);

  const load = async () => {
    try {
      const r = await api<{ data: { channels: ChannelEntry[] } }>(base);
      setList(r.data.channels);
      setLoadError(undefined);
      // Followers as WhatsApp counts them: one ask each, one at a time (the device's socket).
      for (const c of r.data.channels) {
        const got = await api<{ data: { channel: Channel } }>(channelPath(props.deviceId, c.id))
          .then((d) => d.data.channel)
          .catch(() => null);
        setDetails((old) => ({ ...old, [c.id]: got }));
      }
    } catch (err) {
      setLoadError((err as Error).message);
    }
  };
  useEffect(() => {
    void load();
  }, [base]);

  const act = async (where: Where, work: () => Promise<string>, failure: string) => {
    setBusy(true);
    setNotice(undefined);
    try {
      setNotice({ kind: 'success', text: await work(), where });
      await load();
    } catch (err) {
      setNotice({ kind: 'error', text: `${failure}: ${(err as Error).message}`, where });
    } finally {
      setBusy(false);
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act(
      'create',
      async () => {
        const r = await api<{ data: { channel: Channel } }>(base, {
          json: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
        });
        setName('');
        setDescription('');
        setOpen(r.data.channel.id);
        return `Channel "${r.data.channel.name}" created.`;
      },
      'Could not create the channel',
    );
  };
  const follow = (e: Event) => {
    e.preventDefault();
    void act(
      'follow',
      async () => {
        const r = await api<{ data: { channel: Channel } }>(
          `${channelPath(props.deviceId, key.trim())}/follow`,
          {
            method: 'POST',
          },
        );
        setKey('');
        return `Following "${r.data.channel.name}".`;
      },
      'Could not follow the channel',
    );
  };
  const unfollow = () => {
    const c = leaving;
    setLeaving(undefined);
    if (!c) return;
    void act(
      'list',
      async () => {
        await api(`${channelPath(props.deviceId, c.id)}/unfollow`, { method: 'POST' });
        if (open === c.id) setOpen(undefined);
        return `No longer following "${c.name}".`;
      },
      'Could not unfollow the channel',
    );
  };

  return (
    <div class="channels-page">
      <section class="card" aria-labelledby="channels-title" data-testid="channel-list">
        <h2 id="channels-title">Channels</h2>
        <p class="muted">
          The channels this account created or followed through the gateway (WhatsApp has no list of them to
          ask for).
        </p>
        {notice?.where === 'list' && <Banner kind={notice.kind}>{notice.text}</Banner>}
        {loadError && <Banner kind="error">{loadError}</Banner>}
        {!list ? (
          !loadError && <Spinner label="Loading the channels…" />
        ) : list.length === 0 ? (
          <Empty>
            {can ? 'No channel yet. Create one below, or follow one by its invite link.' : 'No channel yet.'}
          </Empty>
        ) : (
          <table class="table responsive channel-table">
            <TableHead
              columns={['Name', 'Role', { label: 'Followers', class: 'num' }, 'Since']}
              actions
              scope
            />
            <tbody>
              {list.map((c) => {
                const d = details[c.id];
                return (
                  <tr key={c.id} data-testid={`channel-${c.id}`} class={open === c.id ? 'selected' : ''}>
                    <td data-label="Name" class="channel-name">
                      <bdi>{d?.name ?? c.name}</bdi>
                      <div class="mono small muted id-text" title={c.id}>
                        {c.id}
                      </div>
                    </td>
                    <td data-label="Role">
                      <span class={`role role-${c.role}`}>{c.role === 'owner' ? 'Owner' : 'Follower'}</span>
                    </td>
                    <td data-label="Followers" class="num">
                      {d ? d.followers : d === null ? '—' : '…'}
                    </td>
                    <td data-label="Since" title={exact(c.since)}>
                      {ago(c.since)}
                    </td>
                    <td class="row-actions">
                      <button
                        type="button"
                        class="secondary small-button"
                        aria-expanded={open === c.id}
                        aria-label={`Open ${c.name}`}
                        onClick={() => setOpen(open === c.id ? undefined : c.id)}
                      >
                        {open === c.id ? 'Close' : 'Open'}
                      </button>
                      {can && c.role === 'follower' && (
                        <RowButton
                          kind="danger-outline"
                          disabled={busy}
                          label={`Unfollow ${c.name}`}
                          onClick={() => setLeaving(c)}
                        >
                          Unfollow
                        </RowButton>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
      {open && (
        <ChannelPanel
          key={open}
          deviceId={props.deviceId}
          channelId={open}
          onChanged={() => void load()}
          onDeleted={() => {
            setOpen(undefined);
            void load();
          }}
        />
      )}
      {can && (
        <div class="channel-forms">
          <Card id="channel-create-title" title="Create a channel">
            <form onSubmit={create}>
              {channelFields(name, setName, description, setDescription, true)}
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || !name.trim()}>
                  Create channel
                </button>
              </div>
              {notice?.where === 'create' && <Banner kind={notice.kind}>{notice.text}</Banner>}
            </form>
          </Card>
          <Card id="channel-follow-title" title="Follow a channel">
            <form onSubmit={follow}>
              <label>
                Channel id or invite link
                <input
                  value={key}
                  autocomplete="off"
                  placeholder="https://whatsapp.com/channel/…"
                  onInput={(e) => setKey(e.currentTarget.value)}
                />
              </label>
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || !key.trim()}>
                  Follow
                </button>
              </div>
              {notice?.where === 'follow' && <Banner kind={notice.kind}>{notice.text}</Banner>}
            </form>
          </Card>
        </div>
      )}
      {leaving && (
        <Confirm
          title={`Unfollow ${leaving.name}?`}
          confirmLabel="Unfollow"
          onConfirm={unfollow}
          onCancel={() => setLeaving(undefined)}
        >
          The account stops getting its posts. Follow it again by its id or invite link.
        </Confirm>
      )}
    </div>
  );
}
