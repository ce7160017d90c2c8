import { useState } from 'preact/hooks';
import { api } from '../kit/api';
import { phone } from '../kit/format';
import { Card, NoticeBanner } from '../kit/ui';
import { useAction } from '../kit/action';

/** POST …/contacts/username's `data` (docs/usernames.md). */
interface UsernameResolution {
  username: string;
  status: 'found' | 'pin_required' | 'not_found';
  contact?: { phone?: string; lid?: string; username?: string };
}

const STATUS_TEXT: Record<UsernameResolution['status'], string> = {
  found: 'Found',
  pin_required: 'Needs its PIN',
  not_found: 'Not found',
};

/**
 * Who has a WhatsApp username (docs/usernames.md): the operator types `@alice.shop` (and its
 * 4-digit PIN when the username is guarded by one); the device asks WhatsApp and remembers a found
 * one, which sends may then name as `to: "@alice.shop"`. The PIN is not kept, on the page or in
 * the gateway.
 */
export function UsernameSection(props: { deviceId: string }) {
  const base = `/devices/${encodeURIComponent(props.deviceId)}`;
  const [username, setUsername] = useState('');
  const [pin, setPin] = useState('');
  const [found, setFound] = useState<UsernameResolution | undefined>(undefined);
  const { busy, notice, act } = useAction();

  const resolve = () =>
    act(async () => {
      const r = await api<{ data: UsernameResolution }>(`${base}/contacts/username`, {
        json: { username: username.trim(), ...(pin.trim() ? { pin: pin.trim() } : {}) },
      });
      setFound(r.data);
      setPin('');
      const at = `@${r.data.username}`;
      if (r.data.status === 'found') return `${at} found: sends may name it as ${at}.`;
      if (r.data.status === 'pin_required')
        return `${at} is guarded by a PIN: enter its 4 digits and look it up again.`;
      return `No WhatsApp account has ${at}.`;
    }, 'Could not look the username up: ');

  const contact = found?.contact;
  return (
    <Card id="usernames-title" title="Usernames">
      <p class="muted">
        A contact may be reached by its WhatsApp username instead of its number. Look a username up once (with
        its PIN when it has one); sends can then name it as its <span class="mono">@username</span>.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void resolve();
        }}
      >
        <label>
          Username
          <input
            value={username}
            placeholder="@alice.shop"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            onInput={(e) => setUsername(e.currentTarget.value)}
          />
        </label>
        <label>
          PIN (if it has one)
          <input
            value={pin}
            type="password"
            inputMode="numeric"
            maxLength={4}
            autocomplete="off"
            onInput={(e) => setPin(e.currentTarget.value)}
          />
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !username.trim()}>
            Look up username
          </button>
        </div>
      </form>
      <NoticeBanner notice={notice} />
      {found && (
        <div class="facts" data-testid="username-result">
          <div>
            <span class="muted small">Username</span>
            <div class="mono">@{found.username}</div>
          </div>
          <div>
            <span class="muted small">WhatsApp says</span>
            <div>{STATUS_TEXT[found.status]}</div>
          </div>
          {contact?.lid && (
            <div>
              <span class="muted small">LID</span>
              <div class="mono">{contact.lid}</div>
            </div>
          )}
          {found.status === 'found' && (
            <div>
              <span class="muted small">Number</span>
              <div class="mono">{contact?.phone ? phone(contact.phone) : 'Hidden'}</div>
            </div>
          )}
        </div>
      )}
    </Card>
  );
}
