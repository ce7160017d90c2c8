import { useEffect, useRef, useState } from 'preact/hooks';
import { useAction } from '../kit/action';
import { api, ApiFailure, type CloudDevice } from '../kit/api';
import { CopyRow } from '../kit/copy';
import { FormActions, useSubmit } from '../kit/form';
import { ago, exact } from '../kit/format';
import { useLiveData } from '../kit/live';
import { useCanChange } from '../kit/session';
import { Banner, Card, Confirm, NoticeBanner, Spinner, StatusBadge } from '../kit/ui';
import {
  CLOUD_FIELDS,
  CLOUD_WEBHOOK_PATH,
  EMPTY_CLOUD_FORM,
  cloudBody,
  cloudReasonWords,
  formFailure,
  qualityOf,
  refusedFields,
  tierWords,
  withoutSecrets,
  type CloudField,
  type CloudFormText,
} from './cloud-form';
import './cloud.css';

/** The section's id: its heading's, and the anchor the Devices page's link panel points to (`#cloud`). */
export const CLOUD_ANCHOR = 'cloud';

/** What a Cloud API device is, in the one line the section opens with. */
const WHAT_IT_IS =
  'A number on WhatsApp’s Cloud API (Meta’s official Business Platform) sends through Meta’s Graph API with its ' +
  'access token: no phone is linked, and no QR or pairing code is needed (docs/cloud-api.md).';

/** The state, the number as Meta knows it, and the configuration: never a secret (the API has none to show). */
function CloudView(props: { cloud: CloudDevice }) {
  const c = props.cloud;
  const p = c.profile;
  const quality = p ? qualityOf(p.qualityRating) : undefined;
  return (
    <>
      <div class="facts" data-testid="cloud-state">
        <div>
          <span class="muted small">State</span>
          <div>
            <StatusBadge status={c.status} testId="cloud-status" />
          </div>
        </div>
        {p && (
          <>
            <div>
              <span class="muted small">Number</span>
              <div>{p.displayPhoneNumber}</div>
            </div>
            <div>
              <span class="muted small">Verified name</span>
              <div class="wrap">{p.verifiedName}</div>
            </div>
            <div>
              <span class="muted small">Quality</span>
              <div>
                <span
                  class={`badge${quality?.band ? ` badge-${quality.band}` : ''}`}
                  data-testid="cloud-quality"
                >
                  {quality?.words}
                </span>
              </div>
            </div>
            <div>
              <span class="muted small">Messaging tier</span>
              <div>{tierWords(p.messagingLimitTier)}</div>
            </div>
            <div>
              <span class="muted small">Checked with Meta</span>
              <div title={exact(p.checkedAt)}>{ago(p.checkedAt)}</div>
            </div>
          </>
        )}
      </div>
      {c.status === 'disconnected' && (
        <p class="muted" data-testid="cloud-reason">
          {c.reason
            ? cloudReasonWords(c.reason)
            : 'Not connected yet: Connect checks the credentials with Meta again.'}
        </p>
      )}
      <div class="facts" data-testid="cloud-config">
        <div>
          <span class="muted small">Phone-number ID</span>
          <div class="mono wrap">{c.phoneNumberId}</div>
        </div>
        <div>
          <span class="muted small">Business Account ID</span>
          <div class="mono wrap">{c.wabaId}</div>
        </div>
        <div>
          <span class="muted small">Throughput</span>
          <div>{c.throughputPerSecond} messages/s</div>
        </div>
        <div>
          <span class="muted small">Graph API</span>
          <div class="mono">{c.graphVersion}</div>
        </div>
        <div>
          <span class="muted small">OTP template</span>
          <div class="mono wrap">{c.otpTemplate}</div>
        </div>
        <div>
          <span class="muted small">Credentials</span>
          <div>stored encrypted (hidden)</div>
        </div>
        <div>
          <span class="muted small">Updated</span>
          <div>{exact(c.updatedAt)}</div>
        </div>
      </div>
    </>
  );
}

/**
 * The credentials' form (a new number, or replacing them). The three secrets are password fields
 * the browser neither fills nor keeps; they are emptied as soon as the request leaves, whichever
 * way it goes, so no secret outlives its one request in the page. The fields an API refusal names
 * (the 400's details, Meta's 422 about the token or the number id) are marked with what was said.
 */
function CloudForm(props: {
  path: string;
  replacing: boolean;
  onSaved: (cloud: CloudDevice) => void;
  onCancel?: () => void;
}) {
  const [form, setForm] = useState<CloudFormText>(EMPTY_CLOUD_FORM);
  const [refused, setRefused] = useState<Partial<Record<CloudField, string>>>({});
  const submit = useSubmit(
    async () => {
      const json = cloudBody(form);
      setForm(withoutSecrets(form));
      setRefused({});
      try {
        const r = await api<{ data: CloudDevice }>(props.path, { method: 'PUT', json });
        setForm(EMPTY_CLOUD_FORM);
        props.onSaved(r.data);
      } catch (err) {
        if (err instanceof ApiFailure) setRefused(refusedFields(err.body.details));
        throw err;
      }
    },
    {
      failure: (err) =>
        err instanceof ApiFailure ? formFailure(err.body.error, err.body.details, err.message) : err.message,
    },
  );
  const missing = CLOUD_FIELDS.some((f) => !f.optional && form[f.field].trim() === '');
  return (
    <form onSubmit={submit.onSubmit} noValidate class="cloud-form" aria-label="Cloud API credentials">
      <div class="cloud-grid">
        {CLOUD_FIELDS.map(({ field, label, hint, secret, placeholder }) => {
          const error = refused[field];
          const id = `cloud-${field}`;
          return (
            <div key={field}>
              <label for={id}>{label}</label>
              <input
                id={id}
                type={secret ? 'password' : 'text'}
                autocomplete="off"
                spellcheck={false}
                {...(field === 'throughputPerSecond' ? { inputMode: 'numeric' as const } : {})}
                placeholder={placeholder}
                class={error ? 'invalid' : undefined}
                aria-invalid={error ? 'true' : undefined}
                aria-describedby={error ? `${id}-error ${id}-hint` : `${id}-hint`}
                value={form[field]}
                onInput={(e) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value })}
              />
              {error && (
                <p id={`${id}-error`} class="field-error">
                  {error}
                </p>
              )}
              <p id={`${id}-hint`} class="hint">
                {hint}
              </p>
            </div>
          );
        })}
      </div>
      <FormActions
        label={props.replacing ? 'Save new credentials' : 'Save and check with Meta'}
        busy={submit.busy}
        busyLabel="Checking with Meta…"
        disabled={missing}
        onCancel={props.onCancel}
        error={submit.error}
      />
    </form>
  );
}

/** Where Meta sends the number's webhooks: this gateway's one endpoint, with the verify token given here. */
function MetaWebhook() {
  return (
    <div class="cloud-webhook">
      <p class="small">
        <span class="strong">Meta’s webhook</span>: in the Meta app, set this callback URL with the verify
        token given here, and subscribe to <span class="mono">messages</span>.
      </p>
      <CopyRow
        value={`${location.origin}${CLOUD_WEBHOOK_PATH}`}
        testId="cloud-callback-url"
        label="Copy URL"
      />
    </div>
  );
}

/**
 * The device's WhatsApp Cloud API number (docs/cloud-api.md), on the admin API's
 * `/devices/:deviceId/cloud`: for a device that is not one, what it is and the form that makes it
 * one (checked with Meta first); for one, its state, the number as Meta knows it and its
 * configuration, `Connect` (checked with Meta again), `Replace credentials` and `Forget` (after a
 * confirmation). A device linked by QR or pairing code cannot be one until it is disconnected. An
 * agent sees it all without the controls. The state follows the event stream (`session.status`:
 * a token Meta stops accepting turns the number disconnected by itself).
 */
export function CloudSection(props: {
  deviceId: string;
  linkedByCode: boolean;
  /** Told whether the device is a Cloud API number, once loaded and after each change. */
  onEngine?: (cloud: boolean) => void;
}) {
  const can = useCanChange();
  const device = encodeURIComponent(props.deviceId);
  const path = `/devices/${device}/cloud`;
  const loaded = useLiveData(
    () =>
      api<{ data: CloudDevice }>(path)
        .then((r): CloudDevice | null => r.data)
        .catch((err: unknown) => {
          if (err instanceof ApiFailure && err.status === 404) return null;
          throw err;
        }),
    { device: props.deviceId, types: ['session.status'] },
    [path],
  );
  // What the section shows: the last load, or what a save, a connect or a forget answered since.
  const [cloud, setCloud] = useState<CloudDevice | null | undefined>(undefined);
  useEffect(() => {
    if (loaded.data !== undefined) setCloud(loaded.data);
  }, [loaded.data]);
  const isCloud = cloud === undefined ? undefined : cloud !== null;
  useEffect(() => {
    if (isCloud !== undefined) props.onEngine?.(isCloud);
  }, [isCloud]);
  const [replacing, setReplacing] = useState(false);
  const [forgetting, setForgetting] = useState(false);
  const action = useAction();
  const { busy, notice } = action;

  // Sent here by the link panel (`#cloud`): the section comes into view once it has loaded.
  const section = useRef<HTMLDivElement>(null);
  const loadedOnce = cloud !== undefined;
  useEffect(() => {
    if (loadedOnce && location.hash === `#${CLOUD_ANCHOR}`)
      section.current?.scrollIntoView({ block: 'start' });
  }, [loadedOnce]);

  const reread = async () => setCloud((await api<{ data: CloudDevice }>(path)).data);
  const connect = () =>
    action.act(async () => {
      try {
        await api(`/devices/${device}/connect`, { json: {} });
      } finally {
        // Refused by Meta, the number turned disconnected with the reason: shown either way.
        await reread().catch(() => undefined);
      }
      return 'Connected: Meta accepted the credentials, and a sender sends through the number now.';
    }, 'Could not connect: ');
  const forget = () =>
    action
      .act(async () => {
        await api(path, { method: 'DELETE' });
        setCloud(null);
        setReplacing(false);
        return 'Forgotten: the credentials are deleted and the device no longer sends through the number.';
      }, 'Could not forget the number: ')
      .finally(() => setForgetting(false));
  const saved = (c: CloudDevice) => {
    setCloud(c);
    setReplacing(false);
    const who = c.profile
      ? ` Meta knows the number as ${c.profile.verifiedName} (${c.profile.displayPhoneNumber}).`
      : '';
    action.setNotice({
      kind: 'success',
      text: `Saved.${who}${c.status === 'connected' ? '' : ' Connect it to send.'}`,
    });
  };

  return (
    <div ref={section} id={CLOUD_ANCHOR} class="cloud-section">
      <Card id={`${CLOUD_ANCHOR}-title`} title="WhatsApp Cloud API">
        <p class="muted">{WHAT_IT_IS}</p>
        {loaded.error && (
          <Banner kind="error">Could not load the Cloud API configuration: {loaded.error}</Banner>
        )}
        {cloud === undefined && !loaded.error && <Spinner label="Loading the Cloud API configuration…" />}
        {cloud && <CloudView cloud={cloud} />}
        {cloud && can && (
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void connect()}>
              {busy ? 'Checking with Meta…' : cloud.status === 'connected' ? 'Check again' : 'Connect'}
            </button>
            {!replacing && (
              <button type="button" class="secondary" disabled={busy} onClick={() => setReplacing(true)}>
                Replace credentials
              </button>
            )}
            <button type="button" class="danger-outline" disabled={busy} onClick={() => setForgetting(true)}>
              Forget
            </button>
          </div>
        )}
        <NoticeBanner notice={notice} />
        {cloud === null &&
          (props.linkedByCode ? (
            <p class="muted" data-testid="cloud-linked">
              This device is linked by QR or pairing code: disconnect it first to make it a Cloud API number.
            </p>
          ) : (
            <>
              <p class="muted" data-testid="cloud-none">
                Not a Cloud API number.{can ? ' Give its credentials to make it one:' : ''}
              </p>
              {can && <CloudForm path={path} replacing={false} onSaved={saved} />}
            </>
          ))}
        {cloud && can && replacing && (
          <CloudForm path={path} replacing onSaved={saved} onCancel={() => setReplacing(false)} />
        )}
        {cloud && <MetaWebhook />}
        {forgetting && (
          <Confirm
            title={`Forget the Cloud API number of ${props.deviceId}?`}
            confirmLabel="Yes, forget it"
            busy={busy}
            onConfirm={() => void forget()}
            onCancel={() => setForgetting(false)}
          >
            <p>
              Its access token, app secret and verify token are deleted and the device stops sending through
              the number. Using it again needs the credentials again.
            </p>
          </Confirm>
        )}
      </Card>
    </div>
  );
}
