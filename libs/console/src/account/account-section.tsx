import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../kit/action';
import { api, ApiFailure } from '../kit/api';
import { phone } from '../kit/format';
import { Banner, Card, NoticeBanner, Spinner } from '../kit/ui';
import { useCanChange } from '../kit/session';
import { RowButton, TableHead } from '../kit/table';

interface Profile {
  phone: string;
  name?: string;
  about?: string;
  pictureUrl?: string;
}
interface Contact {
  phone?: string;
  lid?: string;
}

const NOT_CONNECTED =
  'The device is not connected: its profile is read and changed through its WhatsApp connection.';

/** A file's bytes as base64 (the photo goes to the API as JSON, as a client would send it). */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

/**
 * The account's profile as WhatsApp shows it (docs/account.md): its push name, its "about" and its
 * photo, read and changed through the device's connection (the sender holding it asks WhatsApp).
 */
export function ProfileSection(props: { deviceId: string }) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/profile`;
  const [profile, setProfile] = useState<Profile | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [name, setName] = useState('');
  const [about, setAbout] = useState('');
  const [photo, setPhoto] = useState<File | undefined>(undefined);
  const { busy, notice, act } = useAction();

  const show = (p: Profile) => {
    setProfile(p);
    setName(p.name ?? '');
    setAbout(p.about ?? '');
  };
  useEffect(() => {
    api<{ data: { profile: Profile } }>(path)
      .then((r) => show(r.data.profile))
      .catch((err: unknown) =>
        setLoadError(
          err instanceof ApiFailure && err.status === 409 ? NOT_CONNECTED : (err as Error).message,
        ),
      );
  }, [path]);

  const save = () =>
    act(async () => {
      const json: Record<string, string> = {};
      if (name.trim() !== (profile?.name ?? '')) json.name = name.trim();
      if (about !== (profile?.about ?? '')) json.about = about;
      if (Object.keys(json).length === 0) return 'Nothing changed.';
      show((await api<{ data: { profile: Profile } }>(path, { method: 'PATCH', json })).data.profile);
      return 'Profile saved.';
    }, 'Could not save the profile: ');
  const upload = () =>
    act(async () => {
      if (!photo) return 'Choose a photo first.';
      const json = { base64: await base64Of(photo) };
      show(
        (await api<{ data: { profile: Profile } }>(`${path}/photo`, { method: 'PUT', json })).data.profile,
      );
      setPhoto(undefined);
      return 'Photo set.';
    }, 'Could not set the photo: ');
  const removePhoto = () =>
    act(async () => {
      show((await api<{ data: { profile: Profile } }>(`${path}/photo`, { method: 'DELETE' })).data.profile);
      return 'Photo removed.';
    }, 'Could not remove the photo: ');

  return (
    <Card id="profile-title" title="Profile">
      <p class="muted">
        What contacts see of this account: its name beside its messages, its about and its photo.
      </p>
      {loadError && <Banner kind={loadError === NOT_CONNECTED ? 'info' : 'error'}>{loadError}</Banner>}
      {!profile && !loadError && <Spinner label="Loading the profile…" />}
      {profile && (
        <>
          <div data-testid="profile-current" class="facts">
            <div>
              <span class="muted small">Phone</span>
              <div class="mono">{phone(profile.phone)}</div>
            </div>
            <div>
              <span class="muted small">Name</span>
              <div>
                <bdi>{profile.name ?? '—'}</bdi>
              </div>
            </div>
            <div>
              <span class="muted small">About</span>
              <div>
                <bdi>{profile.about ?? '—'}</bdi>
              </div>
            </div>
            <div>
              <span class="muted small">Photo</span>
              <div>{profile.pictureUrl ? 'set' : 'none'}</div>
            </div>
          </div>
          {can && (
            <>
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void save();
                }}
              >
                <label>
                  Name
                  <input value={name} maxLength={25} onInput={(e) => setName(e.currentTarget.value)} />
                </label>
                <label>
                  About
                  <input value={about} maxLength={139} onInput={(e) => setAbout(e.currentTarget.value)} />
                </label>
                <div class="actions">
                  <button type="submit" class="primary" disabled={busy}>
                    {busy ? 'Saving…' : 'Save profile'}
                  </button>
                </div>
              </form>
              <div class="actions">
                <label>
                  Photo (JPEG, PNG or WebP, at most 5 MB)
                  <input
                    type="file"
                    accept="image/jpeg,image/png,image/webp"
                    onChange={(e) => setPhoto(e.currentTarget.files?.[0])}
                  />
                </label>
                <button type="button" class="primary" disabled={busy || !photo} onClick={() => void upload()}>
                  Set photo
                </button>
                {profile.pictureUrl && (
                  <button type="button" class="danger" disabled={busy} onClick={() => void removePhoto()}>
                    Remove photo
                  </button>
                )}
              </div>
            </>
          )}
        </>
      )}
      <NoticeBanner notice={notice} />
    </Card>
  );
}

/** The account's blocklist (kept in Redis by the device's holder): who it blocked, and unblock. */
export function BlocklistSection(props: { deviceId: string }) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/blocklist`;
  const [contacts, setContacts] = useState<Contact[] | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [number, setNumber] = useState('');
  const { busy, notice, act } = useAction();

  const load = () =>
    api<{ data: { contacts: Contact[] } }>(path)
      .then((r) => {
        setContacts(r.data.contacts);
        setLoadError(undefined);
      })
      .catch((err: unknown) =>
        setLoadError(
          err instanceof ApiFailure && err.status === 409
            ? 'The device is not linked: it has no blocklist.'
            : (err as Error).message,
        ),
      );
  useEffect(() => {
    void load();
  }, [path]);

  const block = () =>
    act(async () => {
      await api(path, { json: { phone: number.trim() } });
      setNumber('');
      await load();
      return 'Blocked.';
    }, 'Could not block: ');
  const unblock = (c: Contact) =>
    act(async () => {
      await api(`${path}/${encodeURIComponent(c.phone ?? c.lid ?? '')}`, { method: 'DELETE' });
      await load();
      return `Unblocked ${c.phone ? phone(c.phone) : c.lid}.`;
    }, 'Could not unblock: ');

  return (
    <Card id="blocklist-title" title="Blocklist">
      <p class="muted">
        Numbers this account blocked (here or on the phone). A message to one of them is refused.
      </p>
      {loadError && <Banner kind="info">{loadError}</Banner>}
      {!contacts && !loadError && <Spinner label="Loading the blocklist…" />}
      {contacts &&
        (contacts.length === 0 ? (
          <p class="muted" data-testid="blocklist-empty">
            Nobody is blocked.
          </p>
        ) : (
          <table class="table responsive blocklist-table" data-testid="blocklist">
            <TableHead columns={['Number', 'LID']} actions={can} scope />
            <tbody>
              {contacts.map((c) => (
                <tr key={c.lid ?? c.phone}>
                  <td data-label="Number" class="mono">
                    {c.phone ? phone(c.phone) : '—'}
                  </td>
                  <td data-label="LID" class="mono blocklist-lid">
                    {c.lid ?? '—'}
                  </td>
                  {can && (
                    <td class="row-actions">
                      <RowButton
                        kind="secondary"
                        disabled={busy}
                        label={`Unblock ${c.phone ? phone(c.phone) : c.lid}`}
                        onClick={() => void unblock(c)}
                      >
                        Unblock
                      </RowButton>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {can && !loadError && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void block();
          }}
        >
          <label>
            Number to block
            <input
              value={number}
              placeholder="15551234567"
              onInput={(e) => setNumber(e.currentTarget.value)}
            />
          </label>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !number.trim()}>
              Block
            </button>
          </div>
        </form>
      )}
      <NoticeBanner notice={notice} />
    </Card>
  );
}
