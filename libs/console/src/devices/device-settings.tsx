import { useEffect, useState } from 'preact/hooks';
import {
  api,
  ApiFailure,
  type Device,
  type DeviceEngine,
  type PolicyAnswer,
  type PolicyOverrides,
  type Webhook,
} from '../kit/api';
import { ShownOnce } from '../kit/copy';
import { WEBHOOK_EVENTS } from '../kit/events';
import { exact } from '../kit/format';
import { Banner, Card, Confirm, NoticeBanner, Spinner } from '../kit/ui';
import { OptOutsSection } from '../opt-outs/opt-outs';
import { ProxySection } from '../proxies/proxy-section';
import { BlocklistSection, ProfileSection } from '../account/account-section';
import { PresenceSection } from '../account/presence-section';
import { UsernameSection } from '../contacts/username-section';
import { CloudSection } from '../cloud/cloud-section';
import { linkedByCode } from '../cloud/cloud-form';
import './device-settings.css';
import { useCanChange, useWho } from '../kit/session';

type Notice = { kind: 'error' | 'success'; text: string } | undefined;

/**
 * The webhook's new secret lives only in this component's state, like a new token's value: shown
 * once, gone on a reload or when "Done" is pressed (GET /webhook never returns it).
 */
function NewSecret(props: { secret: string; onDone: () => void }) {
  return (
    <ShownOnce title="Signing secret" value={props.secret} testId="new-webhook-secret" onDone={props.onDone}>
      Copy it now: it is shown only this once. Deliveries are signed with it (Standard Webhooks).
    </ShownOnce>
  );
}

function WebhookSection(props: { deviceId: string }) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/webhook`;
  const [webhook, setWebhook] = useState<Webhook | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [confirming, setConfirming] = useState(false);

  const show = (w: Webhook | null) => {
    setWebhook(w);
    setUrl(w?.url ?? '');
    setEvents(w && w.events.length < WEBHOOK_EVENTS.length ? w.events : []);
  };

  useEffect(() => {
    api<{ data: Webhook }>(path)
      .then((r) => show(r.data))
      .catch((err: unknown) => {
        if (err instanceof ApiFailure && err.status === 404) show(null);
        else setLoadError((err as Error).message);
      });
  }, [path]);

  const put = async (rotateSecret: boolean) => {
    setBusy(true);
    setNotice(undefined);
    try {
      const target = rotateSecret && webhook ? webhook.url : url.trim();
      const chosen = rotateSecret && webhook ? webhook.events : events;
      const all = chosen.length === 0 || chosen.length === WEBHOOK_EVENTS.length;
      const r = await api<{ data: Webhook }>(path, {
        method: 'PUT',
        json: { url: target, ...(all ? {} : { events: chosen }), ...(rotateSecret ? { rotateSecret } : {}) },
      });
      const { secret: made, ...view } = r.data;
      show(view);
      if (made) setSecret(made);
      setNotice({
        kind: 'success',
        text: rotateSecret
          ? 'Secret rotated. The previous one keeps signing for the overlap (WEBHOOK_SECRET_OVERLAP_SECONDS), so the receiver can switch.'
          : 'Webhook saved.',
      });
    } catch (err) {
      setNotice({ kind: 'error', text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      await api(path, { method: 'DELETE' });
      show(null);
      setSecret(undefined);
      setNotice({ kind: 'success', text: 'Webhook removed: no more events are sent.' });
    } catch (err) {
      setNotice({ kind: 'error', text: `Could not remove the webhook: ${(err as Error).message}` });
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  const toggle = (e: string) =>
    setEvents((now) => (now.includes(e) ? now.filter((x) => x !== e) : [...now, e]));

  return (
    <Card id="webhook-title" title="Webhook">
      <p class="muted">
        The gateway POSTs this device's events to this URL, signed with the secret (docs/events.md).
      </p>
      {loadError && <Banner kind="error">Could not load the webhook: {loadError}</Banner>}
      {webhook === undefined && !loadError ? (
        <Spinner label="Loading the webhook…" />
      ) : (
        <>
          <div data-testid="webhook-current" class="facts">
            {webhook ? (
              <>
                <div>
                  <span class="muted small">Sends to</span>
                  <div class="mono wrap">{webhook.url}</div>
                </div>
                <div>
                  <span class="muted small">Events</span>
                  <div>
                    {webhook.events.length === WEBHOOK_EVENTS.length ? 'all' : webhook.events.join(', ')}
                  </div>
                </div>
                <div>
                  <span class="muted small">Since</span>
                  <div>{exact(webhook.createdAt)}</div>
                </div>
                {webhook.disabledAt && (
                  <div>
                    <span class="badge badge-failed">
                      Disabled {exact(webhook.disabledAt)}
                      {webhook.disabledReason ? ` (${webhook.disabledReason})` : ''}
                    </span>
                  </div>
                )}
              </>
            ) : (
              <div class="muted">No webhook: events of this device are not sent anywhere.</div>
            )}
          </div>
          {can && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void put(false);
              }}
            >
              <label for="webhook-url">Webhook URL</label>
              <input
                id="webhook-url"
                type="url"
                required
                placeholder="https://example.com/hooks/whatsapp"
                value={url}
                onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
              />
              <fieldset class="checks">
                <legend>Events (none ticked = all)</legend>
                {WEBHOOK_EVENTS.map((e) => (
                  <label key={e} class="check">
                    <input type="checkbox" checked={events.includes(e)} onChange={() => toggle(e)} />
                    <span class="mono">{e}</span>
                  </label>
                ))}
              </fieldset>
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || url.trim() === ''}>
                  {busy ? 'Saving…' : 'Save webhook'}
                </button>
                {webhook && (
                  <>
                    <button type="button" class="secondary" disabled={busy} onClick={() => void put(true)}>
                      Rotate secret
                    </button>
                    <button
                      type="button"
                      class="danger-outline"
                      disabled={busy}
                      onClick={() => setConfirming(true)}
                    >
                      Remove webhook
                    </button>
                  </>
                )}
              </div>
            </form>
          )}
        </>
      )}
      <NoticeBanner notice={notice} />
      {secret && <NewSecret secret={secret} onDone={() => setSecret(undefined)} />}
      {confirming && (
        <Confirm
          title={`Remove the webhook of ${props.deviceId}?`}
          confirmLabel="Yes, remove"
          busy={busy}
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>No more events are sent, and the events not delivered yet are dropped.</p>
        </Confirm>
      )}
    </Card>
  );
}

/** The form's fields: each empty one goes back to the default (null in the PUT). */
const POLICY_INPUTS: { field: keyof PolicyOverrides; label: string; hint: string; list?: boolean }[] = [
  { field: 'dailyCap', label: 'Daily cap', hint: 'Messages per day once warmed up; 0 = no cap.' },
  { field: 'firstContactCap', label: 'First-contact cap', hint: 'New numbers per day; 0 = no cap.' },
  { field: 'otpReserve', label: 'OTP reserve', hint: 'Share of each cap kept for OTPs, 0–0.5.' },
  {
    field: 'warmupCaps',
    label: 'Warm-up ladder',
    hint: 'Caps of the first days, such as 50,100,200.',
    list: true,
  },
  { field: 'quietHours', label: 'Quiet hours', hint: '22:00-07:00, or off.' },
  { field: 'timeZone', label: 'Time zone', hint: 'IANA, such as Europe/Berlin.' },
  { field: 'sendGapMs', label: 'Min gap (ms)', hint: 'Least time between two messages.' },
  { field: 'typing', label: 'Typing…', hint: 'Shows the contact "typing…" before a paced text.' },
];

/** "Typing…" is a yes or no, or the default (on): the form's value is the PUT's true, false or null. */
const TYPING_CHOICES = [
  { value: '', label: 'Default (on)' },
  { value: 'true', label: 'On' },
  { value: 'false', label: 'Off' },
];

function toInput(v: unknown): string {
  if (v === undefined || v === null) return '';
  return Array.isArray(v) ? v.join(',') : String(v);
}

/** A number when the text is one; otherwise the text itself, for the API to explain. */
function asNumber(text: string): number | string {
  return text !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

function policyBody(form: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const { field, list } of POLICY_INPUTS) {
    const v = (form[field] ?? '').trim();
    if (v === '') body[field] = null;
    else if (list) body[field] = v.split(',').map((x) => asNumber(x.trim()));
    else if (field === 'quietHours' || field === 'timeZone') body[field] = v;
    else if (field === 'typing') body[field] = v === 'true' ? true : v === 'false' ? false : v;
    else body[field] = asNumber(v);
  }
  return body;
}

function PolicySection(props: { deviceId: string }) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/policy`;
  const [answer, setAnswer] = useState<PolicyAnswer | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [form, setForm] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  /** The fields the API's 400 details name: marked next to the message. */
  const [invalid, setInvalid] = useState<string[]>([]);

  const show = (a: PolicyAnswer) => {
    setAnswer(a);
    setForm(Object.fromEntries(POLICY_INPUTS.map(({ field }) => [field, toInput(a.overrides[field])])));
  };
  useEffect(() => {
    api<PolicyAnswer>(path)
      .then(show)
      .catch((err: unknown) => setLoadError((err as Error).message));
  }, [path]);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setNotice(undefined);
    setInvalid([]);
    try {
      show(await api<PolicyAnswer>(path, { method: 'PUT', json: policyBody(form) }));
      setNotice({ kind: 'success', text: 'Policy saved: it applies to the next message.' });
    } catch (err) {
      const details = err instanceof ApiFailure ? err.body.details : undefined;
      if (Array.isArray(details)) {
        setInvalid(details.map((d: { path?: unknown[] }) => String(d.path?.[0] ?? '')));
      }
      setNotice({ kind: 'error', text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const s = answer?.sending;
  return (
    <Card id="policy-title" title="Sending policy">
      <p class="muted">
        What keeps the account safe (docs/architecture.md, “Keeping accounts safe”). An empty field uses the
        gateway's default.
      </p>
      {loadError && <Banner kind="error">Could not load the policy: {loadError}</Banner>}
      {!answer && !loadError && <Spinner label="Loading the policy…" />}
      {s && (
        <div class="facts" data-testid="policy-effective">
          <div>
            <span class="muted small">Sent today</span>
            <div>
              <span class="strong">{s.sentToday}</span>
              {s.dailyCap !== null ? ` / ${s.dailyCap}` : ' (no cap)'}
              {s.warmupDay !== undefined && <span class="muted small"> · warm-up day {s.warmupDay}</span>}
            </div>
          </div>
          <div>
            <span class="muted small">First contacts</span>
            <div>
              {s.firstContactsToday}
              {s.firstContactCap !== null ? ` / ${s.firstContactCap}` : ' (no cap)'}
            </div>
          </div>
          <div>
            <span class="muted small">OTP reserve</span>
            <div>{Math.round(s.otpReserve * 100)} %</div>
          </div>
          <div>
            <span class="muted small">Quiet hours</span>
            <div>{s.quietHours ?? 'none'}</div>
          </div>
          <div>
            <span class="muted small">Time zone</span>
            <div>{s.timeZone}</div>
          </div>
          <div>
            <span class="muted small">Counters start again</span>
            <div>{exact(s.windowEndsAt)}</div>
          </div>
          {s.pausedUntil && (
            <div>
              <span class="badge badge-failed">Paused until {exact(s.pausedUntil)}</span>
            </div>
          )}
        </div>
      )}
      {can && answer && (
        <form onSubmit={save} noValidate>
          <div class="policy-grid">
            {POLICY_INPUTS.map(({ field, label, hint }) => (
              <div key={field}>
                <label for={`policy-${field}`}>{label}</label>
                {field === 'typing' ? (
                  <select
                    id="policy-typing"
                    class={invalid.includes(field) ? 'invalid' : undefined}
                    aria-invalid={invalid.includes(field) ? 'true' : undefined}
                    value={form[field] ?? ''}
                    onChange={(e) => setForm({ ...form, [field]: (e.target as HTMLSelectElement).value })}
                  >
                    {TYPING_CHOICES.map((c) => (
                      <option key={c.value} value={c.value}>
                        {c.label}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={`policy-${field}`}
                    class={invalid.includes(field) ? 'invalid' : undefined}
                    aria-invalid={invalid.includes(field) ? 'true' : undefined}
                    placeholder="default"
                    autocomplete="off"
                    value={form[field] ?? ''}
                    onInput={(e) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value })}
                  />
                )}
                <p class="hint">{hint}</p>
              </div>
            ))}
          </div>
          <NoticeBanner notice={notice} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save policy'}
            </button>
          </div>
        </form>
      )}
    </Card>
  );
}

/**
 * `/dashboard/devices/<id>`: the device's profile, presence, username lookups, webhook, proxy, sending
 * policy, opt-outs and blocklist, and its WhatsApp Cloud API number (device-page.tsx gives the
 * heading and the device's tabs). A Cloud API number has no WhatsApp connection of the device's
 * own: the sections that act through one (profile, presence, usernames, proxy, blocklist) are not
 * shown for it.
 */
export function DeviceSettingsPage(props: {
  deviceId: string;
  /** The device as the Devices page lists it (device-page.tsx reads it): its engine, whether it is linked. */
  device: Device | null | undefined;
  /** Told when the Cloud API section finds the device is, or is no longer, a Cloud API number. */
  onEngine: (engine: DeviceEngine) => void;
}) {
  const who = useWho();
  const can = who.canChange;
  const device = props.device;
  const linked = device ? linkedByCode(device) : false;
  // Whether it is a Cloud API number now: as the device was read, then as the section last said.
  const [cloudNow, setCloudNow] = useState<boolean | undefined>(undefined);
  const linkedOnly = device !== undefined && !(cloudNow ?? device?.engine === 'cloud');
  // The Cloud API section comes first where it says what the device is — a Cloud API number, or
  // one not linked yet that may become one — and after the proxy for a device linked by QR or
  // code. The place is chosen once the device is read, and no step of the section moves it.
  const cloud = device !== undefined && (
    <CloudSection
      deviceId={props.deviceId}
      linkedByCode={linked}
      onEngine={(isCloud) => {
        setCloudNow(isCloud);
        props.onEngine(isCloud ? 'cloud' : 'linked');
      }}
    />
  );
  return (
    <div class="device-settings">
      {!linked && cloud}
      {linkedOnly && <ProfileSection deviceId={props.deviceId} />}
      {linkedOnly && <PresenceSection deviceId={props.deviceId} />}
      {/* A lookup form only (it records what it finds): an agent's console shows none. */}
      {linkedOnly && can && <UsernameSection deviceId={props.deviceId} />}
      <WebhookSection deviceId={props.deviceId} />
      {/* Where a device connects through is the operator's (a workspace's console has no proxy routes). */}
      {linkedOnly && who.operator && <ProxySection deviceId={props.deviceId} />}
      {linked && cloud}
      <PolicySection deviceId={props.deviceId} />
      <OptOutsSection deviceId={props.deviceId} />
      {linkedOnly && <BlocklistSection deviceId={props.deviceId} />}
    </div>
  );
}
