import { useEffect, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { ago, exact, phone } from '../kit/format';
import { useEventStream, type LiveEvent } from '../kit/live';
import { Card, NoticeBanner } from '../kit/ui';
import { useAction } from '../kit/action';
import { useCanChange } from '../kit/session';
import { TableHead } from '../kit/table';

/** A contact's identity as events and the API name it. */
interface Contact {
  phone?: string;
  lid?: string;
}

/** `presence.update`'s data (docs/events.md). */
interface PresenceUpdate {
  contact: Contact;
  presence: 'online' | 'offline' | 'typing' | 'recording' | 'paused';
  lastSeen?: string;
  chat?: { type: 'group'; id: string };
  at: string;
}

/** GET /contacts/:number/profile's `data.profile` (docs/account.md). */
interface ContactProfile {
  contact: Contact;
  about?: string;
  aboutSetAt?: string;
  pictureUrl?: string;
  business?: Record<string, unknown>;
}

const PRESENCE_LABEL: Record<PresenceUpdate['presence'], string> = {
  online: 'Online',
  offline: 'Offline',
  typing: 'Typing…',
  recording: 'Recording audio…',
  paused: 'Stopped typing',
};

/** GET /devices/:deviceId/presence's `data`: the account's own presence (docs/dashboard.md). */
interface OwnPresence {
  presence: 'available' | 'unavailable';
  /** When the API set it during the current connection; absent: the gateway's default (offline). */
  setAt?: string;
}

/** The account's presence now: Online or Offline, and since when or why. */
function CurrentPresence(props: { own: OwnPresence | undefined; error: string | undefined }) {
  const { own } = props;
  const online = own?.presence === 'available';
  return (
    <div class="facts" data-testid="presence-current">
      <div>
        <span class="muted small">Contacts see the account as</span>
        <div class="presence-now">
          {own ? (
            <span class={online ? 'badge badge-connected' : 'badge'}>
              <span class="dot" aria-hidden="true" />
              {online ? 'Online' : 'Offline'}
            </span>
          ) : (
            <span class="muted">{props.error ? `Unknown (${props.error})` : 'Loading…'}</span>
          )}
          {own && (
            <span class="muted small">
              {own.setAt ? (
                <>
                  set <span title={exact(own.setAt)}>{ago(own.setAt)}</span>
                </>
              ) : (
                'as the gateway connects it'
              )}
            </span>
          )}
        </div>
      </div>
    </div>
  );
}

const keyOf = (c: Contact) => c.phone ?? c.lid ?? '';
const shown = (c: Contact) => (c.phone ? phone(c.phone) : (c.lid ?? '—'));

/**
 * The account's presence and its contacts' (docs/account.md): show the account online or offline,
 * watch a contact (its `presence.update` events then arrive on the page live, over the admin event
 * stream), and look up a contact's profile. A watch lasts as long as the device's connection
 * (WhatsApp's rule), so the table holds what arrived while the page was open.
 */
export function PresenceSection(props: { deviceId: string }) {
  const can = useCanChange();
  const base = `/devices/${encodeURIComponent(props.deviceId)}`;
  const [number, setNumber] = useState('');
  const [watched, setWatched] = useState<Map<string, PresenceUpdate | Contact>>(new Map());
  const [profile, setProfile] = useState<ContactProfile | undefined>(undefined);
  const { busy, notice, act } = useAction();
  const [own, setOwnView] = useState<OwnPresence | undefined>(undefined);
  const [ownError, setOwnError] = useState<string | undefined>(undefined);
  const readOwn = () =>
    api<{ data: OwnPresence }>(`${base}/presence`)
      .then((r) => {
        setOwnView(r.data);
        setOwnError(undefined);
      })
      .catch((err: unknown) => setOwnError((err as Error).message));
  useEffect(() => {
    void readOwn();
  }, [base]);

  useEventStream({
    device: props.deviceId,
    types: ['presence.update'],
    onOpen: () => undefined,
    onEvent: (e: LiveEvent) => {
      const update = e.data as unknown as PresenceUpdate;
      if (!update.contact) return;
      setWatched((m) => new Map(m).set(keyOf(update.contact), update));
    },
  });

  const setOwn = (presence: 'available' | 'unavailable') =>
    act(async () => {
      await api(`${base}/presence`, { method: 'PUT', json: { presence } });
      await readOwn();
      return presence === 'available' ? 'The account shows as online.' : 'The account shows as offline.';
    }, 'Could not change the presence: ');
  const target = () => encodeURIComponent(number.trim());
  const watch = () =>
    act(async () => {
      await api(`${base}/contacts/${target()}/presence`, { method: 'POST' });
      const asked = number.trim();
      const contact: Contact = asked.endsWith('@lid') ? { lid: asked } : { phone: asked };
      setWatched((m) => (m.has(keyOf(contact)) ? m : new Map(m).set(keyOf(contact), contact)));
      return `Watching ${shown(contact)}: its presence shows below as it changes.`;
    }, 'Could not watch the contact: ');
  const lookUp = () =>
    act(async () => {
      const r = await api<{ data: { profile: ContactProfile } }>(`${base}/contacts/${target()}/profile`);
      setProfile(r.data.profile);
      return `Profile of ${shown(r.data.profile.contact)} read.`;
    }, 'Could not read the profile: ');

  const rows = [...watched.values()];
  return (
    <Card id="presence-title" title="Presence">
      <p class="muted">
        The gateway connects the account as offline, so its phone keeps getting notifications. Showing it
        online needs a profile name.
      </p>
      <CurrentPresence own={own} error={ownError} />
      {can && (
        <>
          <div class="actions">
            <button type="button" class="secondary" disabled={busy} onClick={() => void setOwn('available')}>
              Show as online
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy}
              onClick={() => void setOwn('unavailable')}
            >
              Show as offline
            </button>
          </div>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void watch();
            }}
          >
            <label>
              Contact (number or LID)
              <input
                value={number}
                placeholder="15551234567"
                inputMode="text"
                autocomplete="off"
                onInput={(e) => setNumber(e.currentTarget.value)}
              />
            </label>
            <div class="actions">
              <button type="submit" class="primary" disabled={busy || !number.trim()}>
                Watch presence
              </button>
              <button
                type="button"
                class="secondary"
                disabled={busy || !number.trim()}
                onClick={() => void lookUp()}
              >
                Look up profile
              </button>
            </div>
          </form>
        </>
      )}
      <NoticeBanner notice={notice} />
      {profile && (
        <div class="facts" data-testid="contact-profile">
          <div>
            <span class="muted small">Contact</span>
            <div class="mono">{shown(profile.contact)}</div>
          </div>
          <div class="wrap">
            <span class="muted small">About</span>
            <div>
              <bdi>{profile.about ?? '—'}</bdi>
              {profile.aboutSetAt ? <span class="muted small"> (set {ago(profile.aboutSetAt)})</span> : null}
            </div>
          </div>
          <div>
            <span class="muted small">Business</span>
            <div>{profile.business ? 'Yes' : 'No'}</div>
          </div>
          {profile.pictureUrl && (
            <div>
              <span class="muted small">Photo</span>
              <div>
                <a href={profile.pictureUrl} target="_blank" rel="noopener noreferrer">
                  Open the photo
                </a>
              </div>
            </div>
          )}
        </div>
      )}
      {rows.length === 0 ? (
        <p class="muted" data-testid="presence-empty">
          {can
            ? 'No contact watched yet: enter a number and choose “Watch presence”.'
            : 'No contact watched.'}
        </p>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Watched contacts">
          <table class="table" data-testid="presence">
            <TableHead columns={['Contact', 'Presence', 'Last seen', 'Updated']} />
            <tbody>
              {rows.map((r) => {
                const u = 'presence' in r ? r : undefined;
                const contact = u ? u.contact : (r as Contact);
                return (
                  <tr key={keyOf(contact)} data-testid={`presence-${keyOf(contact)}`}>
                    <td class="mono">{shown(contact)}</td>
                    <td>
                      {u ? PRESENCE_LABEL[u.presence] : <span class="muted">Waiting for an update…</span>}
                      {u?.chat ? <span class="muted small"> in a group</span> : null}
                    </td>
                    <td>{u?.lastSeen ? <span title={exact(u.lastSeen)}>{ago(u.lastSeen)}</span> : '—'}</td>
                    <td>{u ? <span title={exact(u.at)}>{ago(u.at)}</span> : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
