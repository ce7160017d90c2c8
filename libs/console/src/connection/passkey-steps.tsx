import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, api, type PasskeyStep, type PasskeyView } from '../kit/api';
import { ownEntry } from '../kit/format';
import { Banner } from '../kit/ui';

/** Where a passkey-gated link stands, as the link panel follows it (docs/passkeys.md). */
export interface PasskeyProgress {
  step: PasskeyStep;
  expiresAt: string;
  /** The code the phone shows, from `confirm_code` on. */
  code?: string;
}

/** How a passkey-gated link attempt can end without a link, in plain words (GET /status's `reason`). */
const FAILURES: Record<string, string> = {
  passkey_expired: 'The passkey request expired before the passkey was used.',
  passkey_rejected:
    'WhatsApp refused the passkey: it was not this account’s passkey, or it was used without verifying you.',
  passkey_no_continuation: 'WhatsApp took the passkey but the phone never answered.',
  passkey_options_unavailable:
    'WhatsApp asked for a passkey without saying which one, and would not say when asked.',
  passkey_failed:
    'A step after the passkey failed: the phone’s answer or the pairing request was not accepted.',
};

/** A failed passkey-gated link's reason in plain words, or undefined for any other reason. */
export function passkeyFailure(reason: string | undefined): string | undefined {
  return ownEntry(FAILURES, reason);
}

/** The same in a few words, for the Devices table (under the status). */
const SHORT: Record<string, string> = {
  passkey_expired: 'passkey request expired',
  passkey_rejected: 'passkey refused by WhatsApp',
  passkey_no_continuation: 'no answer after the passkey',
  passkey_options_unavailable: 'passkey request without options',
  passkey_failed: 'a passkey step failed',
};

/** Why a device is disconnected, in a few words (a passkey reason's own; else the reason's). */
export function reasonWords(reason: string): string {
  return ownEntry(SHORT, reason) ?? reason.replace(/_/g, ' ');
}

/** A connecting device's passkey step, in a few words (the Devices table). */
export const STEP_WORDS: Record<PasskeyStep, string> = {
  assertion: 'waiting for the passkey',
  verifying: 'verifying the passkey',
  confirm_code: 'code to compare',
  finishing: 'finishing the link',
};

const STEPS: { step: PasskeyStep; label: string }[] = [
  { step: 'assertion', label: 'Passkey' },
  { step: 'verifying', label: 'Verifying' },
  { step: 'confirm_code', label: 'Compare code' },
  { step: 'finishing', label: 'Finishing' },
];

const clock = (iso: string) =>
  new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** "9:41" until `expiresAt`, ticking; screen readers get the time it expires at, once. */
function Expiry(props: { expiresAt: string }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const s = Math.max(0, Math.round((Date.parse(props.expiresAt) - now) / 1000));
  return (
    <p class="passkey-expiry">
      <span aria-hidden="true">
        Expires in{' '}
        <strong class="mono" data-testid="passkey-countdown">
          {Math.floor(s / 60)}:{String(s % 60).padStart(2, '0')}
        </strong>
      </span>
      <span class="visually-hidden">Expires at {clock(props.expiresAt)}</span>
    </p>
  );
}

/**
 * A passkey-gated link's steps on the link panel: what to do while WhatsApp waits for the
 * passkey, then verifying, the code to compare (with Confirm), and finishing.
 */
export function PasskeySteps(props: {
  deviceId: string;
  passkey: PasskeyProgress;
  /** The confirmation was taken: where the link stands now. */
  onConfirmed: (now: PasskeyProgress | undefined) => void;
}) {
  const { deviceId, passkey } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => setError(undefined), [passkey.step]);

  const confirm = async () => {
    if (busy || !passkey.code) return;
    setBusy(true);
    setError(undefined);
    try {
      const res = await api<{ data?: PasskeyView }>(
        `/devices/${encodeURIComponent(deviceId)}/connect/passkey/confirm`,
        { json: { code: passkey.code } },
      );
      props.onConfirmed(
        res.data && { step: res.data.step, expiresAt: res.data.expiresAt, code: res.data.code },
      );
    } catch (err) {
      const step = err instanceof ApiFailure && typeof err.body.step === 'string' ? err.body.step : undefined;
      setError(step ? `The link is at another step now (${step}).` : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const current = STEPS.findIndex((s) => s.step === passkey.step);
  return (
    <div class="passkey-steps" data-testid="passkey-steps" data-step={passkey.step}>
      <ol class="passkey-progress" aria-label="Passkey link">
        {STEPS.map((s, i) => (
          <li
            key={s.step}
            class={i < current ? 'done' : i === current ? 'current' : undefined}
            aria-current={i === current ? 'step' : undefined}
          >
            {s.label}
          </li>
        ))}
      </ol>
      {passkey.step === 'assertion' && (
        <>
          <h3>Waiting for the passkey</h3>
          <Expiry expiresAt={passkey.expiresAt} />
          <p>
            WhatsApp asks for this account’s passkey before it links <strong>{deviceId}</strong>. In Chrome or
            Edge with the gateway’s passkey extension set up with {deviceId}’s API token, open{' '}
            <strong>web.whatsapp.com</strong> and choose <em>Use passkey</em>. The passkey can come from:
          </p>
          <ul class="passkey-ways">
            <li>
              <strong>This computer</strong>: its screen lock or a security key, when the passkey is there.
            </li>
            <li>
              <strong>The phone</strong>: choose “Use a phone or tablet” and scan the QR the browser shows
              with the phone that holds the passkey.
            </li>
            <li>
              <strong>A password manager</strong> that syncs the passkey to that browser.
            </li>
          </ul>
          <p class="hint small">
            The extension is in the gateway’s repository,{' '}
            <span class="mono">integrations/passkey-extension</span>; its README says how to install it.
          </p>
        </>
      )}
      {passkey.step === 'verifying' && (
        <>
          <h3>Verifying the passkey…</h3>
          <p>WhatsApp checks the passkey; the phone answers next with a code to compare.</p>
        </>
      )}
      {passkey.step === 'confirm_code' && (
        <>
          <h3>Compare the code</h3>
          <p>The phone shows a code. Confirm only if it is this one, and confirm it on the phone too:</p>
          <output class="passkey-code mono" data-testid="passkey-code">
            {passkey.code ?? '…'}
          </output>
          <button
            type="button"
            class="primary"
            disabled={!passkey.code}
            aria-disabled={busy}
            onClick={() => void confirm()}
          >
            {busy ? 'Confirming…' : 'Confirm: the codes match'}
          </button>
          <Expiry expiresAt={passkey.expiresAt} />
        </>
      )}
      {passkey.step === 'finishing' && (
        <>
          <h3>Finishing the link…</h3>
          <p>The phone completes it once the code is confirmed there too.</p>
        </>
      )}
      {error && <Banner kind="error">{error}</Banner>}
    </div>
  );
}
