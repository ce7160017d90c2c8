import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Device, type Pool, type Token } from '../kit/api';
import { ShownOnce } from '../kit/copy';
import { useSubmit } from '../kit/form';
import { ago, exact, shortDate } from '../kit/format';
import { useWho } from '../kit/session';
import { Banner, Confirm, Empty, Spinner, usePoll } from '../kit/ui';
import './tokens.css';
import { RowButton, TableHead } from '../kit/table';

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
  return (
    <ShownOnce
      title={<>Token “{props.token.name}” created</>}
      value={props.value}
      testId="new-token-value"
      onDone={props.onDone}
    >
      Copy it now: it is shown only this once. The gateway keeps only its hash.
    </ShownOnce>
  );
}

export function TokensPage() {
  const who = useWho();
  /** An agent reads the tokens; it creates and revokes none. */
  const can = who.canChange;
  const tokens = usePoll(() => api<{ tokens: Token[] }>('/tokens').then((r) => r.tokens), 15_000);
  const [devices, setDevices] = useState<string[]>([]);
  const [name, setName] = useState('');
  const [deviceId, setDeviceId] = useState('');
  /** A token acts on one device or sends through one pool (docs/pools.md). */
  const [linkTo, setLinkTo] = useState<'device' | 'pool'>('device');
  const [pools, setPools] = useState<Pool[]>([]);
  const [poolId, setPoolId] = useState('');
  const [expiresIn, setExpiresIn] = useState('');
  const [created, setCreated] = useState<{ token: Token; value: string } | undefined>(undefined);
  const [revoking, setRevoking] = useState<Token | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  /**
   * After a revoke the dialog closes and the revoked row goes: the keyboard's focus moves to what
   * the revoke said rather than being lost to the page's top.
   */
  const noticeRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (notice) noticeRef.current?.focus();
  }, [notice]);

  useEffect(() => {
    api<{ devices: Device[] }>('/devices')
      .then((r) => setDevices(r.devices.map((d) => d.deviceId)))
      .catch(() => undefined);
    api<{ pools: Pool[] }>('/pools')
      .then((r) => setPools(r.pools))
      .catch(() => undefined);
  }, []);

  const form = useSubmit(async () => {
    setNotice(undefined);
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
  });

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await api(`/tokens/${encodeURIComponent(revoking.id)}`, { method: 'DELETE' });
      const what = revoking.kind === 'admin' ? 'Admin token' : 'Token';
      setNotice(`${what} “${revoking.name}” revoked: requests with it now get 401.`);
      if (created?.token.id === revoking.id) setCreated(undefined);
      void tokens.refresh();
    } catch (err) {
      form.setError(`Could not revoke “${revoking.name}”: ${(err as Error).message}`);
    } finally {
      setBusy(false);
      setRevoking(undefined);
    }
  };

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
      {can && (
        <section class="card">
          <h2>Create an API token</h2>
          <p class="muted">
            Clients send it as <code>Authorization: Bearer &lt;token&gt;</code>. A token linked to a device
            acts on that device; one linked to a pool spreads its batches over the pool&apos;s devices;
            {who.operator
              ? 'without either it acts on the default device.'
              : 'without either it is a workspace token: it acts on any device of the workspace, named in its path (/api/messenger/v1/devices/<id>/…).'}
          </p>
          <form class="form-grid" onSubmit={form.onSubmit}>
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
                    placeholder={who.operator ? 'default' : 'any of the workspace'}
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
                disabled={form.busy || name.trim() === '' || (linkTo === 'pool' && poolId === '')}
              >
                {form.busy ? 'Creating…' : 'Create token'}
              </button>
            </div>
          </form>
          {form.error && <Banner kind="error">{form.error}</Banner>}
          {created && (
            <NewToken token={created.token} value={created.value} onDone={() => setCreated(undefined)} />
          )}
        </section>
      )}
      {notice && (
        <div ref={noticeRef} tabIndex={-1} class="tokens-notice">
          <Banner kind="success">{notice}</Banner>
        </div>
      )}
      <TokenList
        tokens={tokens.data}
        loading={tokens.loading}
        error={tokens.error}
        {...(can ? { onRevoke: (t: Token) => setRevoking(t) } : {})}
      />
      {revoking && (
        <Confirm
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Yes, revoke"
          busy={busy}
          onConfirm={() => void revoke()}
          onCancel={() => setRevoking(undefined)}
        >
          <p>
            {revoking.kind === 'admin'
              ? 'Automation using this admin token gets 401 from the admin API from now on.'
              : 'Clients using this token get 401 from now on.'}{' '}
            This cannot be undone.
          </p>
        </Confirm>
      )}
    </>
  );
}

/** The most recently used first, then the never used ones, newest first (as GET /tokens). */
function byLastUse(a: Token, b: Token): number {
  return (
    (b.lastUsedAt ?? '').localeCompare(a.lastUsedAt ?? '') ||
    b.createdAt.localeCompare(a.createdAt) ||
    a.id.localeCompare(b.id)
  );
}

/** Whether a token matches the filter: its name, id, device or pool, ignoring case. */
function matches(t: Token, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (q === '') return true;
  return [t.name, t.id, t.deviceId, t.poolId].some((x) => x?.toLowerCase().includes(q));
}

/** `tok_3f9a1b…`: enough to tell tokens apart at a glance; the full id is in the title. */
/** API and admin tokens in one table (cards on a phone), with a filter for long lists. */
function TokenList(props: {
  tokens: Token[] | undefined;
  loading: boolean;
  error: string | undefined;
  /** Absent: the list only shows (an agent). */
  onRevoke?: (t: Token) => void;
}) {
  const scoped = !useWho().operator;
  const [query, setQuery] = useState('');
  const all = [...(props.tokens ?? [])].sort(byLastUse);
  const shown = all.filter((t) => matches(t, query));
  return (
    <section class="card">
      <div class="tokens-head">
        <h2>Tokens</h2>
        {all.length > 0 && (
          <div class="tokens-filter">
            <label for="token-filter" class="visually-hidden">
              Filter tokens
            </label>
            <input
              id="token-filter"
              type="search"
              placeholder="Filter by name, id or device"
              autocomplete="off"
              value={query}
              onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
            />
          </div>
        )}
      </div>
      {scoped ? (
        <p class="muted">The workspace’s API tokens. “Last used” is kept to within a minute.</p>
      ) : (
        <p class="muted">
          API tokens and admin tokens. Admin tokens open the admin API for automation; they are made with the
          token CLI (<code>npm run -s token -- admin-create --name &lt;name&gt;</code>), not here, and can be
          revoked here. “Last used” is kept to within a minute.
        </p>
      )}
      {props.error && <Banner kind="error">Could not load tokens: {props.error}</Banner>}
      {props.loading && !props.tokens ? (
        <Spinner label="Loading tokens…" />
      ) : all.length === 0 ? (
        <Empty>No tokens yet.</Empty>
      ) : shown.length === 0 ? (
        <Empty>No token matches “{query.trim()}”.</Empty>
      ) : (
        <>
          {query.trim() !== '' && (
            <p class="muted tokens-count" aria-live="polite">
              {shown.length} of {all.length} tokens
            </p>
          )}
          <table class="table responsive tokens-table">
            <TableHead
              columns={['Kind', 'Id', 'Name', 'Device or pool', 'Created', 'Last used', 'Expires']}
              actions={!!props.onRevoke}
            />
            <tbody>
              {shown.map((t) => (
                <TokenRow key={t.id} token={t} {...(props.onRevoke ? { onRevoke: props.onRevoke } : {})} />
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function TokenRow({ token: t, onRevoke }: { token: Token; onRevoke?: (t: Token) => void }) {
  const scoped = !useWho().operator;
  return (
    <tr data-testid={`token-${t.id}`} data-kind={t.kind}>
      <td data-label="Kind">
        {t.kind === 'admin' ? (
          <span class="badge badge-admin">Admin</span>
        ) : (
          <span class="badge badge-api">API</span>
        )}
      </td>
      {/* The whole id, as text a phone shows and a finger selects (a tooltip is hover-only). */}
      <td data-label="Id" class="mono token-id">
        {t.id}
      </td>
      <td data-label="Name" class="strong">
        {t.name}
      </td>
      <td data-label="Device or pool" class="mono">
        {t.kind === 'admin' ? (
          <span class="muted">admin API</span>
        ) : t.poolId ? (
          <>
            <span class="muted">pool</span> {t.poolId}
          </>
        ) : (
          (t.deviceId ?? <span class="muted">{scoped ? 'workspace' : 'default'}</span>)
        )}
      </td>
      <td data-label="Created" title={exact(t.createdAt)}>
        {shortDate(t.createdAt)}
      </td>
      <td data-label="Last used" class="token-last-used" title={exact(t.lastUsedAt)}>
        {t.lastUsedAt ? ago(t.lastUsedAt) : <span class="muted">never</span>}
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
      {onRevoke && (
        <td class="row-actions">
          <RowButton
            kind="danger-outline"
            label={`Revoke ${t.kind === 'admin' ? 'admin token' : 'token'} ${t.name}`}
            onClick={() => onRevoke(t)}
          >
            Revoke
          </RowButton>
        </td>
      )}
    </tr>
  );
}
