import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Device, type Pairing, type PasskeyView } from '../kit/api';
import { phone as showPhone } from '../kit/format';
import { onLink } from '../kit/router';
import { Banner } from '../kit/ui';
import { PasskeySteps, passkeyFailure, type PasskeyProgress } from './passkey-steps';

type Method = 'qrCode' | 'pairingCode';

interface Linking {
  deviceId: string;
  method: Method;
  qr?: string;
  qrImage?: string;
  pairingCode?: string;
  /** A passkey-gated link: the QR or code was used, and WhatsApp waits for the passkey. */
  passkey?: PasskeyProgress;
  outcome?: { kind: 'success' | 'error' | 'info'; text: string };
}

/** While a pairing runs, its QR (which WhatsApp rotates) and the device's status are re-read this often. */
const WATCH_MS = 1500;

interface ConnectAnswer {
  status?: string;
  message?: string;
  qr?: string;
  qrImage?: string;
  pairingCode?: string;
  /** The link already waits for its passkey (a connect while it does). */
  passkey?: PasskeyProgress;
}

/** In sandbox mode, the simulator's phone-link URL (GET /sandbox); null otherwise. */
interface SandboxInfo {
  phoneLinkUrl: string;
}

/** A simulated phone number for the sandbox's account (any unused number works). */
const SANDBOX_PHONE = '15550000001';

/** Quoted for a POSIX shell: inside single quotes nothing is special but the quote itself. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The exact command that lets the simulated phone scan this QR (README: "Try it without a phone"):
 * the address and the body each one quoted word, whatever they hold (link-panel.test.ts).
 */
export function sandboxLinkCommand(phoneLinkUrl: string, qr: string): string {
  const body = JSON.stringify({ qr, phone: SANDBOX_PHONE, name: 'Sandbox Account' });
  return `curl -s -X POST ${shellQuote(phoneLinkUrl)} -H 'content-type: application/json' \\\n  -d ${shellQuote(body)}`;
}

/**
 * How to scan in sandbox mode: no real phone exists, so the QR is handed to a simulated one by the
 * simulator's control API. **Choice:** the page shows the command (with a copy button) rather than
 * calling the simulator: the browser only ever talks to the gateway, and the API never calls it.
 */
function SandboxHint(props: { sandbox: SandboxInfo; qr: string }) {
  const [copied, setCopied] = useState(false);
  const command = sandboxLinkCommand(props.sandbox.phoneLinkUrl, props.qr);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div class="sandbox-hint" data-testid="sandbox-hint">
      <p>
        <strong>Sandbox mode</strong>: there is no real phone. Let the simulated phone{' '}
        <span class="mono">+{SANDBOX_PHONE}</span> scan this QR by running, in a terminal on the gateway’s
        machine:
      </p>
      <pre class="mono small" data-testid="sandbox-command">
        {command}
      </pre>
      <button type="button" class="secondary" onClick={() => void copy()}>
        {copied ? 'Copied' : 'Copy command'}
      </button>
    </div>
  );
}

export function LinkPanel(props: {
  onChange: () => void;
  /** The device to link first (a workspace's new device, `?link=` of the Devices page). */
  deviceId?: string;
  /** A workspace's console: its devices have ids of their own, there is no `default` to act on. */
  scoped?: boolean;
  /** The ids the Device ID field suggests (a workspace's own devices). */
  known?: string[];
  /** The Cloud API numbers among the devices: they connect with their credentials, never a QR or code. */
  cloud?: string[];
}) {
  const [deviceId, setDeviceId] = useState(props.deviceId ?? (props.scoped ? '' : 'default'));
  const section = useRef<HTMLElement>(null);
  // Sent here to link one device: the panel comes into view with its first button focused.
  useEffect(() => {
    if (!props.deviceId) return;
    section.current?.scrollIntoView({ block: 'start' });
    section.current?.querySelector<HTMLButtonElement>('button.primary')?.focus({ preventScroll: true });
  }, []);
  const [phoneNumber, setPhoneNumber] = useState('');
  const [busy, setBusy] = useState<Method | 'cloud' | undefined>(undefined);
  const [linking, setLinking] = useState<Linking | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  // Polls in a row that saw no pairing: one alone may fall between a pairing and its replacement.
  const misses = useRef(0);
  const [sandbox, setSandbox] = useState<SandboxInfo | null>(null);

  useEffect(() => {
    api<{ sandbox: SandboxInfo | null }>('/sandbox')
      .then((r) => setSandbox(r.sandbox))
      .catch(() => setSandbox(null));
  }, []);

  const start = async (method: Method) => {
    if (busy) return;
    setError(undefined);
    setBusy(method);
    try {
      const id = deviceId.trim();
      const body = method === 'pairingCode' ? { method, phoneNumber: phoneNumber.trim() } : { method };
      const res = await api<ConnectAnswer>(`/devices/${encodeURIComponent(id)}/connect`, { json: body });
      const done = res.status === 'connected' || (!res.qr && !res.pairingCode && !res.passkey);
      misses.current = 0;
      setLinking({
        deviceId: id,
        method,
        qr: res.qr,
        qrImage: res.qrImage,
        pairingCode: res.pairingCode,
        passkey: res.passkey,
        ...(done
          ? { outcome: { kind: 'info', text: `${id}: ${res.message ?? res.status ?? 'nothing to do'}.` } }
          : {}),
      });
      props.onChange();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(undefined);
    }
  };

  /**
   * A Cloud API number connects with the credentials its settings hold: /connect checks them with
   * Meta again and answers `connected` (no QR, no code) or Meta's refusal.
   */
  const connectCloud = async () => {
    if (busy) return;
    setError(undefined);
    setBusy('cloud');
    const id = deviceId.trim();
    try {
      await api(`/devices/${encodeURIComponent(id)}/connect`, { json: {} });
      setLinking({
        deviceId: id,
        method: 'qrCode',
        outcome: { kind: 'success', text: `${id} is connected: Meta accepted its credentials.` },
      });
      props.onChange();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(undefined);
    }
  };

  // Follow the pairing: a new QR replaces the old one; connected (or an ended pairing) closes it.
  useEffect(() => {
    if (!linking || linking.outcome) return;
    // One poll at a time, and none applied once `linking` moved on: on a slow host an answer
    // older than the state it would replace must not set it back (or end the link).
    let stale = false;
    let polling = false;
    const timer = setInterval(async () => {
      if (polling) return;
      polling = true;
      try {
        const res = await api<{ device: Device; pairing?: Pairing }>(
          `/devices/${encodeURIComponent(linking.deviceId)}`,
        );
        if (stale) return;
        const { device, pairing } = res;
        if (device.status === 'connected') {
          const who = [device.name, showPhone(device.phone)].filter(Boolean).join(' · ');
          setLinking({
            ...linking,
            outcome: { kind: 'success', text: `${linking.deviceId} is connected${who ? ` as ${who}` : ''}.` },
          });
          props.onChange();
        } else if (pairing?.state === 'showing' && pairing.passkey) {
          // A passkey-gated link: its step, and the phone's code once there is one to compare.
          misses.current = 0;
          const step = pairing.passkey.step;
          let code = step === 'confirm_code' ? linking.passkey?.code : undefined;
          if (step === 'confirm_code' && !code) {
            const view = await api<{ data: PasskeyView }>(
              `/devices/${encodeURIComponent(linking.deviceId)}/connect/passkey`,
            );
            code = view.data.code;
            if (stale) return;
          }
          const was = linking.passkey;
          if (was?.step !== step || was.expiresAt !== pairing.passkey.expiresAt || was.code !== code)
            setLinking({
              ...linking,
              qr: undefined,
              qrImage: undefined,
              pairingCode: undefined,
              passkey: { ...pairing.passkey, ...(code ? { code } : {}) },
            });
        } else if (
          pairing?.state === 'showing' &&
          (pairing.qr !== linking.qr || pairing.pairingCode !== linking.pairingCode)
        ) {
          setLinking({
            ...linking,
            qr: pairing.qr,
            qrImage: pairing.qrImage,
            pairingCode: pairing.pairingCode,
            passkey: undefined,
          });
        } else if (pairing?.state === 'showing' || pairing?.state === 'starting') {
          misses.current = 0;
        } else if (device.status === 'disconnected' && ++misses.current >= 2) {
          const reason = device.lastDisconnectReason ?? pairing?.reason;
          const plain = passkeyFailure(reason);
          const why = reason ? ` (${reason.replace(/_/g, ' ')})` : '';
          setLinking({
            ...linking,
            outcome: {
              kind: 'error',
              text: plain
                ? `The link ended: ${plain} Start again for a new QR or code.`
                : `The pairing ended${why}. Start again to get a new code.`,
            },
          });
        }
      } catch {
        // A missed poll is retried on the next tick; the page shows the last known code meanwhile.
      } finally {
        polling = false;
      }
    }, WATCH_MS);
    return () => {
      stale = true;
      clearInterval(timer);
    };
  }, [linking]);

  const valid = /^[a-z0-9][a-z0-9_-]{0,31}$/.test(deviceId.trim());
  const cloud = valid && (props.cloud ?? []).includes(deviceId.trim());
  const settings = `/dashboard/devices/${encodeURIComponent(deviceId.trim())}#cloud`;
  return (
    <section class="card link-card" ref={section} aria-labelledby="link-title">
      <h2 id="link-title">Link a device</h2>
      <div class="link-grid">
        <div class="link-form">
          <label for="link-device">Device ID</label>
          <input
            id="link-device"
            list={props.known ? 'link-known-devices' : undefined}
            value={deviceId}
            autocomplete="off"
            spellcheck={false}
            aria-describedby="link-device-hint"
            onInput={(e) => setDeviceId((e.target as HTMLInputElement).value)}
          />
          {props.known && (
            <datalist id="link-known-devices">
              {props.known.map((id) => (
                <option key={id} value={id} />
              ))}
            </datalist>
          )}
          {props.scoped ? (
            <p id="link-device-hint" class="hint">
              One of the workspace’s devices (the Workspace page adds one).
            </p>
          ) : (
            <p id="link-device-hint" class="hint">
              a–z, 0–9, _ and -. Tokens linked to this id act on it; unlinked tokens act on{' '}
              <code>default</code>.
            </p>
          )}
          {cloud ? (
            <>
              <p class="link-cloud" data-testid="link-cloud">
                <strong class="mono">{deviceId.trim()}</strong> is a WhatsApp Cloud API number: it connects
                with the credentials of its settings, without a phone.
              </p>
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  aria-disabled={busy !== undefined}
                  onClick={() => void connectCloud()}
                >
                  {busy === 'cloud' ? 'Checking with Meta…' : 'Connect'}
                </button>
                <a href={settings} onClick={onLink} class="button-link secondary">
                  Cloud API settings
                </a>
              </div>
            </>
          ) : (
            <>
              <label for="link-phone">Phone number (for a pairing code)</label>
              <input
                id="link-phone"
                inputMode="numeric"
                placeholder="15551234567"
                value={phoneNumber}
                onInput={(e) => setPhoneNumber((e.target as HTMLInputElement).value)}
              />
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  // Not disabled while it starts: a disabled button drops the keyboard's focus to the page.
                  disabled={!valid}
                  aria-disabled={busy !== undefined}
                  onClick={() => void start('qrCode')}
                >
                  {busy === 'qrCode' ? 'Starting…' : 'Link with QR code'}
                </button>
                <button
                  type="button"
                  class="secondary"
                  disabled={!valid || phoneNumber.trim() === ''}
                  aria-disabled={busy !== undefined}
                  onClick={() => void start('pairingCode')}
                >
                  {busy === 'pairingCode' ? 'Starting…' : 'Link with pairing code'}
                </button>
              </div>
              {valid && (
                <p class="hint">
                  A number on WhatsApp’s Cloud API instead?{' '}
                  <a href={settings} onClick={onLink}>
                    Set it up in its settings
                  </a>{' '}
                  (no phone, no QR).
                </p>
              )}
            </>
          )}
          {error && <Banner kind="error">{error}</Banner>}
        </div>
        <div class="link-result" aria-live="polite">
          {!linking &&
            (cloud ? (
              <p class="muted">
                A Cloud API number needs no phone: Connect checks its credentials with Meta.
              </p>
            ) : (
              <p class="muted">On the phone: WhatsApp → Settings → Linked devices → Link a device.</p>
            ))}
          {linking?.outcome && <Banner kind={linking.outcome.kind}>{linking.outcome.text}</Banner>}
          {linking && !linking.outcome && linking.qr && (
            <figure class="qr">
              <img
                data-testid="qr-code"
                data-qr={linking.qr}
                src={linking.qrImage}
                alt={`QR code to link ${linking.deviceId}`}
                width={264}
                height={264}
              />
              <figcaption>
                Scan with WhatsApp on the phone to link <strong>{linking.deviceId}</strong>. The code
                refreshes by itself.
              </figcaption>
            </figure>
          )}
          {linking && !linking.outcome && linking.qr && sandbox && (
            <SandboxHint sandbox={sandbox} qr={linking.qr} />
          )}
          {linking && !linking.outcome && linking.passkey && (
            <PasskeySteps
              deviceId={linking.deviceId}
              passkey={linking.passkey}
              onConfirmed={(now) =>
                setLinking({ ...linking, passkey: now ?? { ...linking.passkey!, step: 'finishing' } })
              }
            />
          )}
          {linking && !linking.outcome && linking.pairingCode && (
            <div class="pairing-code">
              <p>On the phone, choose “Link with phone number instead” and enter:</p>
              <output data-testid="pairing-code">
                {linking.pairingCode.slice(0, 4)}-{linking.pairingCode.slice(4)}
              </output>
            </div>
          )}
        </div>
      </div>
    </section>
  );
}
