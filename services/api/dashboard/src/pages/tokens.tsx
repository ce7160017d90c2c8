import { useEffect, useState } from 'preact/hooks';
import { api, type Device, type Pool, type Token } from '../api';
import { ago, exact, shortDate } from '../format';
import { Banner, Confirm, Empty, Spinner, usePoll } from '../ui';

const EXPIRY = [
  { value: '', label: 'Never' },
  { value: '7d', label: 'In 7 days' },
  { value: '30d', label: 'In 30 days' },
  { value: '90d', label: 'In 90 days' },
  { value: '365d', label: 'In 1 year' },
];

/**
 * The new token's value lives only in this component's state: it is shown once, never stored in
 * the URL or the browser's storage, and gone when the page is left or "Done" is pressed.
 */
function NewToken(props: { token: Token; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied(true);
    } catch {
      // Clipboard refused (no permission, plain HTTP): select the text so Ctrl-C works.
      const el = document.querySelector('[data-testid="new-token-value"]');
      if (el) window.getSelection()?.selectAllChildren(el);
    }
  };
  return (
    <div class="new-token" role="status">
      <h3>Token “{props.token.name}” created</h3>
      <p>Copy it now: it is shown only this once. The gateway keeps only its hash.</p>
      <div class="secret-row">
        <code data-testid="new-token-value">{props.value}</code>
        <button type="button" class="secondary" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <button type="button" class="link" onClick={props.onDone}>
        Done, hide it
      </button>
    </div>
  );
}

export function TokensPage() {
  const tokens = usePoll(() => api<{ tokens: Token[] }>('/tokens').then((r) => r.tokens), 15_000);
  const [devices, setDevices] = useState<string[]>([]);
  const [name, setName] = useState('');
  const [deviceId, setDeviceId] = useState('');
  /** A token acts on one device or sends through one pool (docs/pools.md). */
  const [linkTo, setLinkTo] = useState<'device' | 'pool'>('device');
  const [pools, setPools] = useState<Pool[]>([]);
  const [poolId, setPoolId] = useState('');
  const [expiresIn, setExpiresIn] = useState('');
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [created, setCreated] = useState<{ token: Token; value: string } | undefined>(undefined);
  const [revoking, setRevoking] = useState<Token | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  useEffect(() => {
    api<{ devices: Device[] }>('/devices')
      .then((r) => setDevices(r.devices.map((d) => d.deviceId)))
      .catch(() => undefined);
    api<{ pools: Pool[] }>('/pools')
      .then((r) => setPools(r.pools))
      .catch(() => undefined);
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setCreating(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const res = await api<{ token: Token; value: string }>('/tokens', {
        json: {
          name: name.trim(),
          ...(linkTo === 'pool' ? { poolId } : { deviceId: deviceId.trim() }),
          expiresIn,
        },
      });
      setCreated(res);
      setName('');
      setDeviceId('');
      setPoolId('');
      void tokens.refresh();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setCreating(false);
    }
  };

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await api(`/tokens/${encodeURIComponent(revoking.id)}`, { method: 'DELETE' });
      setNotice(`Token “${revoking.name}” revoked: requests with it now get 401.`);
      if (created?.token.id === revoking.id) setCreated(undefined);
      void tokens.refresh();
    } catch (err) {
      setError(`Could not revoke “${revoking.name}”: ${(err as Error).message}`);
    } finally {
      setBusy(false);
      setRevoking(undefined);
    }
  };

  const list = tokens.data ?? [];
  return (
    <>
      <div class="page-head">
        <h1>Settings</h1>
        <nav class="tabs" aria-label="Settings">
          <a href="/dashboard/settings/api" class="active" aria-current="page">
            API
          </a>
        </nav>
      </div>
      <section class="card">
        <h2>Create an API token</h2>
        <p class="muted">
          Clients send it as <code>Authorization: Bearer &lt;token&gt;</code>. A token linked to a device acts
          on that device; one linked to a pool spreads its lists over the pool&apos;s devices; without either
          it acts on the default device.
        </p>
        <form class="form-grid" onSubmit={create}>
          <div>
            <label for="token-name">Name</label>
            <input
              id="token-name"
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </div>
          <div>
            <label for={linkTo === 'pool' ? 'token-pool' : 'token-device'}>
              {linkTo === 'pool' ? 'Pool' : 'Device (optional)'}
            </label>
            <div class="inline">
              <select
                aria-label="Link the token to"
                class="link-to"
                value={linkTo}
                onChange={(e) => setLinkTo((e.target as HTMLSelectElement).value as 'device' | 'pool')}
              >
                <option value="device">Device</option>
                <option value="pool">Pool</option>
              </select>
              {linkTo === 'pool' ? (
                <select
                  id="token-pool"
                  required
                  value={poolId}
                  onChange={(e) => setPoolId((e.target as HTMLSelectElement).value)}
                >
                  <option value="">{pools.length === 0 ? 'No pools yet' : 'Choose a pool'}</option>
                  {pools.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name} ({p.id})
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id="token-device"
                  list="known-devices"
                  placeholder="default"
                  autocomplete="off"
                  value={deviceId}
                  onInput={(e) => setDeviceId((e.target as HTMLInputElement).value)}
                />
              )}
            </div>
            <datalist id="known-devices">
              {devices.map((d) => (
                <option key={d} value={d} />
              ))}
            </datalist>
          </div>
          <div>
            <label for="token-expiry">Expires</label>
            <select
              id="token-expiry"
              value={expiresIn}
              onChange={(e) => setExpiresIn((e.target as HTMLSelectElement).value)}
            >
              {EXPIRY.map((x) => (
                <option key={x.value} value={x.value}>
                  {x.label}
                </option>
              ))}
            </select>
          </div>
          <div class="form-submit">
            <button
              type="submit"
              class="primary"
              disabled={creating || name.trim() === '' || (linkTo === 'pool' && poolId === '')}
            >
              {creating ? 'Creating…' : 'Create token'}
            </button>
          </div>
        </form>
        {error && <Banner kind="error">{error}</Banner>}
        {created && (
          <NewToken token={created.token} value={created.value} onDone={() => setCreated(undefined)} />
        )}
      </section>
      {notice && <Banner kind="success">{notice}</Banner>}
      <section class="card">
        <h2>Tokens</h2>
        {tokens.error && <Banner kind="error">Could not load tokens: {tokens.error}</Banner>}
        {tokens.loading && !tokens.data ? (
          <Spinner label="Loading tokens…" />
        ) : list.length === 0 ? (
          <Empty>No tokens yet.</Empty>
        ) : (
          <table class="table responsive">
            <thead>
              <tr>
                <th>Name</th>
                <th>Device or pool</th>
                <th>Created</th>
                <th>Expires</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((t) => (
                <tr key={t.id} data-testid={`token-${t.id}`}>
                  <td data-label="Name" class="strong">
                    {t.name}
                  </td>
                  <td data-label="Device or pool" class="mono">
                    {t.poolId ? (
                      <>
                        <span class="muted">pool</span> {t.poolId}
                      </>
                    ) : (
                      (t.deviceId ?? <span class="muted">default</span>)
                    )}
                  </td>
                  <td data-label="Created" title={exact(t.createdAt)}>
                    {shortDate(t.createdAt)}
                  </td>
                  <td data-label="Expires" title={exact(t.expiresAt)}>
                    {t.expired ? (
                      <span class="badge badge-failed">Expired</span>
                    ) : t.expiresAt ? (
                      ago(t.expiresAt)
                    ) : (
                      'Never'
                    )}
                  </td>
                  <td class="row-actions">
                    <button type="button" class="danger-outline small-button" onClick={() => setRevoking(t)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {revoking && (
        <Confirm
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Yes, revoke"
          busy={busy}
          onConfirm={() => void revoke()}
          onCancel={() => setRevoking(undefined)}
        >
          <p>Clients using this token get 401 from now on. This cannot be undone.</p>
        </Confirm>
      )}
    </>
  );
}
