import type { ComponentChildren } from 'preact';
import { api } from '../kit/api';
import { useAction } from '../kit/action';
import { ago, exact } from '../kit/format';
import { Banner, NoticeBanner, Spinner, usePoll } from '../kit/ui';
import { useCanChange } from '../kit/session';

/** How one webhook attempt ended, as the notifier recorded it. */
interface AttemptFacts {
  at: string;
  eventId: string;
  type: string;
  outcome: string;
  attempt: number;
  status?: number;
  error?: string;
}

interface BrokerOutlet {
  startedAt?: string;
  cursor?: { id: string; at: string };
  waiting?: number;
  oldestWaitingAt?: string;
  lost?: number;
  lastErrorAt?: string;
  lastError?: string;
  failures: number;
}

export interface Outlets {
  webhook: {
    endpoint: { url: string; events: string[]; disabledAt?: string; disabledReason?: string } | null;
    lastAttempt?: AttemptFacts;
    lastDelivery?: AttemptFacts;
    lastFailure?: AttemptFacts;
    waiting: number;
    retries: { count: number; nextDueAt?: string };
    exhausted: number;
    retryNow?: { at: string; count: number };
  };
  brokers: { rabbitmq: BrokerOutlet; nats: BrokerOutlet; sqs: BrokerOutlet };
}

type BrokerSettings = Record<'rabbitmq' | 'nats' | 'sqs', { enabled: boolean; events?: string[] }>;

const BROKER_NAMES = { rabbitmq: 'RabbitMQ', nats: 'NATS JetStream', sqs: 'Amazon SQS' } as const;

/** A time as "3 min ago", the exact time on hover and for screen readers in the title. */
function When(props: { iso: string | undefined }) {
  return props.iso ? (
    <time dateTime={props.iso} title={exact(props.iso)}>
      {ago(props.iso)}
    </time>
  ) : (
    <>—</>
  );
}

function Fact(props: { label: string; testId?: string; children: ComponentChildren }) {
  return (
    <div class="outlet-fact" data-testid={props.testId}>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

/** What an attempt got: the HTTP status, or the reason it got none. */
function answerOf(a: AttemptFacts): string {
  if (a.status !== undefined) return `HTTP ${a.status}`;
  return a.error ?? a.outcome;
}

function WebhookCard(props: { deviceId: string; outlets: Outlets; reload: () => Promise<void> }) {
  const can = useCanChange();
  const w = props.outlets.webhook;
  // A failure is said in the API's own words (no prefix: `act(change, '')`).
  const { busy, notice, setNotice, act } = useAction();
  // The outcome shows at once; the button waits for the section to be read again.
  const retryNow = () =>
    act(async () => {
      const r = await api<{ data: { waiting: number; madeDue: number } }>(
        `/devices/${encodeURIComponent(props.deviceId)}/webhook/retry-now`,
        { method: 'POST' },
      );
      const n = r.data.waiting;
      setNotice({
        kind: 'success',
        text:
          n === 0
            ? 'No event was waiting for a retry.'
            : `${n} ${n === 1 ? 'event is' : 'events are'} due now: the notifier delivers them in order.`,
      });
      await props.reload();
      return undefined;
    }, '');
  return (
    <section class="card outlet" aria-labelledby="outlet-webhook-title" data-testid="outlet-webhook">
      <h2 id="outlet-webhook-title">Webhook</h2>
      {!w.endpoint ? (
        <p class="muted">
          No webhook: this device's events go to its log (below) and the brokers only. Set one in the device's
          Settings.
        </p>
      ) : (
        <p class="outlet-url">
          <span class="muted small">Sends to</span>{' '}
          <span class="mono" data-testid="webhook-url">
            {w.endpoint.url}
          </span>
          {w.endpoint.disabledAt && (
            <span class="badge badge-failed">
              Disabled <When iso={w.endpoint.disabledAt} />
              {w.endpoint.disabledReason ? ` (${w.endpoint.disabledReason})` : ''}
            </span>
          )}
        </p>
      )}
      <dl class="outlet-facts">
        <Fact label="Last delivery" testId="webhook-last-delivery">
          {w.lastDelivery ? (
            <>
              <When iso={w.lastDelivery.at} /> · {answerOf(w.lastDelivery)} ·{' '}
              <span class="mono small event-id">{w.lastDelivery.eventId}</span>
            </>
          ) : (
            'none yet'
          )}
        </Fact>
        <Fact label="Last failure" testId="webhook-last-failure">
          {w.lastFailure ? (
            <>
              <When iso={w.lastFailure.at} /> · <strong class="failure">{answerOf(w.lastFailure)}</strong> ·
              attempt {w.lastFailure.attempt} ·{' '}
              <span class="mono small event-id">{w.lastFailure.eventId}</span>
            </>
          ) : (
            'none'
          )}
        </Fact>
        <Fact label="Waiting for a first attempt" testId="webhook-waiting">
          {w.waiting}
        </Fact>
        <Fact label="Waiting for a retry" testId="webhook-retries">
          {w.retries.count}
          {w.retries.nextDueAt && (
            <>
              {' '}
              · next <When iso={w.retries.nextDueAt} />
            </>
          )}
        </Fact>
        <Fact label="Dropped after the last attempt" testId="webhook-exhausted">
          {w.exhausted}
        </Fact>
        {w.retryNow && (
          <Fact label="Last “Retry now”" testId="webhook-retry-now-at">
            <When iso={w.retryNow.at} />
          </Fact>
        )}
      </dl>
      {w.endpoint && can && (
        <div class="actions">
          <button
            type="button"
            class="primary"
            disabled={busy || w.retries.count === 0}
            onClick={() => void retryNow()}
          >
            {busy ? 'Working…' : 'Retry now'}
          </button>
          <span class="muted small outlet-hint">
            {w.retries.count === 0
              ? 'Nothing waits for a retry.'
              : 'Makes the waiting retries due at once; each keeps its webhook-id.'}
          </span>
        </div>
      )}
      <NoticeBanner notice={notice} />
    </section>
  );
}

function BrokerFacts(props: {
  name: keyof typeof BROKER_NAMES;
  b: BrokerOutlet;
  setting?: BrokerSettings['rabbitmq'];
}) {
  const { b, setting } = props;
  return (
    <div class="broker" data-testid={`outlet-${props.name}`}>
      <h3>{BROKER_NAMES[props.name]}</h3>
      {!b.startedAt ? (
        <p class="muted small">Not configured: this transport never ran on this install.</p>
      ) : (
        <dl class="outlet-facts">
          <Fact label="For this device">
            {!setting
              ? '—'
              : !setting.enabled
                ? 'off'
                : setting.events
                  ? setting.events.join(', ')
                  : 'every event'}
          </Fact>
          <Fact label="Published up to">{b.cursor ? <When iso={b.cursor.at} /> : 'not served yet'}</Fact>
          <Fact label="Waiting">
            {b.waiting ?? 0}
            {b.oldestWaitingAt && (
              <>
                {' '}
                · oldest <When iso={b.oldestWaitingAt} />
              </>
            )}
          </Fact>
          {b.lost ? <Fact label="Lost to the log's bounds">{b.lost}</Fact> : null}
        </dl>
      )}
      {b.lastError && (
        <p class="small">
          Last error <When iso={b.lastErrorAt} />: <span class="failure">{b.lastError}</span>
        </p>
      )}
    </div>
  );
}

/** The device's ways out: the webhook's state (with "Retry now") and the broker relays'. */
export function DeviceOutlets(props: { deviceId: string }) {
  const base = `/devices/${encodeURIComponent(props.deviceId)}`;
  const outlets = usePoll(() => api<{ data: Outlets }>(`${base}/event-outlets`).then((r) => r.data), 5000, [
    base,
  ]);
  const brokers = usePoll(
    () => api<{ data: BrokerSettings }>(`${base}/events/brokers`).then((r) => r.data),
    30_000,
    [base],
  );
  if (!outlets.data) {
    return outlets.error ? (
      <Banner kind="error">Could not load the ways out: {outlets.error}</Banner>
    ) : (
      <Spinner label="Loading the webhook and brokers…" />
    );
  }
  return (
    <div class="outlets">
      <WebhookCard deviceId={props.deviceId} outlets={outlets.data} reload={outlets.refresh} />
      <section class="card outlet" aria-labelledby="outlet-brokers-title">
        <h2 id="outlet-brokers-title">Brokers</h2>
        <div class="brokers">
          {(['rabbitmq', 'nats', 'sqs'] as const).map((t) => (
            <BrokerFacts key={t} name={t} b={outlets.data!.brokers[t]} setting={brokers.data?.[t]} />
          ))}
        </div>
      </section>
    </div>
  );
}
