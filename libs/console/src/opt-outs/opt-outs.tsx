import { useEffect, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { useAction } from '../kit/action';
import { exact, phone as plus } from '../kit/format';
import { Empty, NoticeBanner, Spinner } from '../kit/ui';
import { useCanChange } from '../kit/session';
import { TableHead } from '../kit/table';

interface OptOutEntry {
  phone: string;
  optedOutAt: string;
}
interface OptOutPage {
  total: number;
  numbers: OptOutEntry[];
  nextCursor?: string;
}
interface OptOutSettingsAnswer {
  settings: { optOutKeywords: string[]; optInKeywords: string[]; confirmation: boolean };
}

/**
 * Keywords of either script, each isolated (`<bdi>`, its direction from its own letters) so that
 * the commas between Arabic and Latin ones stay where the list has them and read in its order.
 */
function Keywords(props: { list: string[]; testId: string }) {
  return (
    <span data-testid={props.testId}>
      {props.list.map((k, i) => (
        <span key={k}>
          {i > 0 && ', '}
          <bdi class="mono">{k}</bdi>
        </span>
      ))}
    </span>
  );
}

/**
 * The device's suppression list: the numbers that opted out (a keyword, or added here), newest
 * first a page at a time; add or remove a number; switch the confirmation message on or off.
 */
export function OptOutsSection(props: { deviceId: string }) {
  const can = useCanChange();
  const base = `/devices/${encodeURIComponent(props.deviceId)}`;
  const [page, setPage] = useState<OptOutPage | undefined>(undefined);
  const [settings, setSettings] = useState<OptOutSettingsAnswer['settings'] | undefined>(undefined);
  const [number, setNumber] = useState('');
  // A failure is said in the API's own words (no prefix: `act(change, '')`).
  const { busy, notice, setNotice, act: run } = useAction();

  const load = async () => {
    const [list, s] = await Promise.all([
      api<{ data: OptOutPage }>(`${base}/opt-outs?limit=50`),
      api<{ data: OptOutSettingsAnswer }>(`${base}/opt-out-settings`),
    ]);
    setPage(list.data);
    setSettings(s.data.settings);
  };
  useEffect(() => {
    load().catch((err: unknown) => setNotice({ kind: 'error', text: (err as Error).message }));
  }, [base]);

  const act = (work: () => Promise<unknown>, done: string) =>
    run(async () => {
      await work();
      await load();
      return done;
    }, '');
  const add = (e: Event) => {
    e.preventDefault();
    const digits = number.replace(/[^\d]/g, '');
    void act(
      () => api(`${base}/opt-outs`, { json: { phone: digits || number.trim() } }),
      `${plus(digits)} gets no more messages.`,
    ).then(() => setNumber(''));
  };
  const remove = (p: string) =>
    void act(() => api(`${base}/opt-outs/${p}`, { method: 'DELETE' }), `${plus(p)} may get messages again.`);
  const more = async () => {
    if (!page?.nextCursor) return;
    const next = await api<{ data: OptOutPage }>(
      `${base}/opt-outs?limit=50&cursor=${encodeURIComponent(page.nextCursor)}`,
    );
    setPage({ ...next.data, numbers: [...page.numbers, ...next.data.numbers] });
  };
  const toggleConfirmation = () =>
    void act(
      () =>
        api(`${base}/opt-out-settings`, { method: 'PUT', json: { confirmation: !settings?.confirmation } }),
      settings?.confirmation ? 'Confirmations are off.' : 'Confirmations are on.',
    );

  return (
    <section class="card" aria-labelledby="opt-outs-title" data-testid="opt-outs">
      <h2 id="opt-outs-title">Opt-outs</h2>
      <p class="muted">
        A contact who writes{' '}
        <Keywords list={settings?.optOutKeywords ?? ['STOP']} testId="opt-out-keywords" /> gets no more
        messages (OTPs still go);{' '}
        <Keywords list={settings?.optInKeywords ?? ['START']} testId="opt-in-keywords" /> undoes it.
      </p>
      {settings && !can && (
        <p data-testid="opt-out-confirmation">
          Confirmation message: {settings.confirmation ? 'sent' : 'not sent'}.
        </p>
      )}
      {settings && can && (
        <label class="check">
          <input
            type="checkbox"
            checked={settings.confirmation}
            disabled={busy}
            onChange={toggleConfirmation}
          />{' '}
          Send a confirmation message
        </label>
      )}
      {can && (
        <form onSubmit={add} noValidate>
          {/* The API takes digits only, as every number field's placeholder shows (a typed "+" is dropped). */}
          <label for="opt-out-phone">Number to suppress</label>
          <input
            id="opt-out-phone"
            inputMode="tel"
            autocomplete="off"
            placeholder="15551234567"
            value={number}
            onInput={(e) => setNumber((e.target as HTMLInputElement).value)}
          />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !number.trim()}>
              Suppress
            </button>
          </div>
        </form>
      )}
      <NoticeBanner notice={notice} />
      {!page ? (
        <Spinner label="Loading the suppression list…" />
      ) : page.numbers.length === 0 ? (
        <Empty>No number has opted out.</Empty>
      ) : (
        <>
          <p class="muted small" data-testid="opt-outs-total">
            {page.total} suppressed {page.total === 1 ? 'number' : 'numbers'}
          </p>
          <table class="table responsive">
            <TableHead columns={['Number', 'Since']} actions={can} scope />
            <tbody>
              {page.numbers.map((n) => (
                <tr key={n.phone} data-testid={`opt-out-${n.phone}`}>
                  <td data-label="Number" class="mono">
                    {plus(n.phone)}
                  </td>
                  <td data-label="Since">{exact(n.optedOutAt)}</td>
                  {can && (
                    <td>
                      <button
                        type="button"
                        class="secondary"
                        disabled={busy}
                        aria-label={`Remove ${plus(n.phone)}`}
                        onClick={() => remove(n.phone)}
                      >
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          {page.nextCursor && (
            <button type="button" class="link" onClick={() => void more()}>
              Show more
            </button>
          )}
        </>
      )}
    </section>
  );
}
