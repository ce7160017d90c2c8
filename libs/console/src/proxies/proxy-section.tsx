import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../kit/action';
import { api, ApiFailure, type DeviceProxy } from '../kit/api';
import { exact, ownEntry } from '../kit/format';
import { Banner, Card, Confirm, NoticeBanner, Spinner } from '../kit/ui';
import { useCanChange } from '../kit/session';

/** What the API said of the change (`applied`), for the operator. */
const APPLIED: Record<string, string> = {
  reconnecting: 'The device is reconnecting through it now.',
  'not-connected': 'No sender holds the device now: its next connection uses it.',
  unknown: 'The sender did not answer in time: it reconnects when it hears the change.',
};

/**
 * The device's proxy (docs/proxies.md). The URL typed here, credentials included, goes to the API
 * once and is never shown again: the API answers where the proxy is and whether it has credentials.
 * The field is cleared after a save.
 */
export function ProxySection(props: { deviceId: string }) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/proxy`;
  const [proxy, setProxy] = useState<DeviceProxy | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [url, setUrl] = useState('');
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const { busy, notice } = action;

  useEffect(() => {
    api<{ data: DeviceProxy }>(path)
      .then((r) => setProxy(r.data))
      .catch((err: unknown) => {
        if (err instanceof ApiFailure && err.status === 404) setProxy(null);
        else setLoadError((err as Error).message);
      });
  }, [path]);

  /** The kit's action; the confirmation (of a remove) closes whichever way it went. */
  const act = (change: () => Promise<string>, failure: string) =>
    action.act(change, failure).finally(() => setConfirming(false));
  const save = () =>
    act(async () => {
      const r = await api<{ data: DeviceProxy; applied: string }>(path, {
        method: 'PUT',
        json: { url: url.trim() },
      });
      setProxy(r.data);
      setUrl('');
      return `Proxy saved. ${ownEntry(APPLIED, r.applied) ?? ''}`;
    }, '');
  const direct = () =>
    act(async () => {
      const r = await api<{ data: DeviceProxy; applied: string }>(path, {
        method: 'PUT',
        json: { direct: true },
      });
      setProxy(r.data);
      return `The device connects directly. ${ownEntry(APPLIED, r.applied) ?? ''}`;
    }, 'Could not set the device to connect directly: ');
  const remove = () =>
    act(async () => {
      const r = await api<{ applied: string }>(path, { method: 'DELETE' });
      setProxy(null);
      return `Proxy removed. ${ownEntry(APPLIED, r.applied) ?? ''}`;
    }, 'Could not remove the proxy: ');

  return (
    <Card id="proxy-title" title="Proxy">
      <p class="muted">
        Every connection of this device goes through it (HTTP CONNECT or SOCKS5); without one it uses
        DEVICE_PROXY_URL, if set, unless it is set to connect directly. The credentials are stored encrypted
        and never shown again.
      </p>
      {loadError && <Banner kind="error">Could not load the proxy: {loadError}</Banner>}
      {proxy === undefined && !loadError ? (
        <Spinner label="Loading the proxy…" />
      ) : (
        <>
          <div data-testid="proxy-current" class="facts">
            {proxy ? (
              <>
                <div>
                  <span class="muted small">Through</span>
                  {proxy.direct ? (
                    <div>no proxy: directly, not through DEVICE_PROXY_URL</div>
                  ) : (
                    <div class="mono wrap">{proxy.url}</div>
                  )}
                </div>
                {!proxy.direct && (
                  <div>
                    <span class="muted small">Credentials</span>
                    <div>{proxy.hasCredentials ? 'yes (hidden)' : 'none'}</div>
                  </div>
                )}
                <div>
                  <span class="muted small">Since</span>
                  <div>{exact(proxy.updatedAt)}</div>
                </div>
              </>
            ) : (
              <div class="muted">No proxy of its own.</div>
            )}
          </div>
          {can && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void save();
              }}
            >
              <label for="proxy-url">Proxy URL</label>
              <input
                id="proxy-url"
                type="text"
                autocomplete="off"
                spellcheck={false}
                placeholder="socks5://user:pass@proxy.example:1080"
                value={url}
                onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
              />
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || url.trim() === ''}>
                  {busy ? 'Saving…' : 'Save proxy'}
                </button>
                {!proxy?.direct && (
                  <button type="button" class="secondary" disabled={busy} onClick={() => void direct()}>
                    Connect directly
                  </button>
                )}
                {proxy && (
                  <button
                    type="button"
                    class="danger-outline"
                    disabled={busy}
                    onClick={() => setConfirming(true)}
                  >
                    Remove proxy
                  </button>
                )}
              </div>
            </form>
          )}
        </>
      )}
      <NoticeBanner notice={notice} />
      {confirming && (
        <Confirm
          title={`Remove the proxy of ${props.deviceId}?`}
          confirmLabel="Yes, remove"
          busy={busy}
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>The device reconnects directly (or through DEVICE_PROXY_URL).</p>
        </Confirm>
      )}
    </Card>
  );
}
