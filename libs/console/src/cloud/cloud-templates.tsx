import { useEffect, useState } from 'preact/hooks';
import {
  api,
  ApiFailure,
  type CloudTemplate,
  type CloudTemplateComponent,
  type CloudTemplates,
} from '../kit/api';
import { ago, exact } from '../kit/format';
import { onLink } from '../kit/router';
import { Banner, Empty, NoticeBanner, Spinner } from '../kit/ui';
import type { Notice } from '../kit/action';
import { CLOUD_ANCHOR } from './cloud-section';
import {
  buttonKind,
  categoryWords,
  mediaWords,
  parameterWords,
  placeholderParts,
  statusesOf,
  templateMatches,
  templateStatusHint,
  templateStatusOf,
} from './template-view';
import './cloud-templates.css';

/** A template's text, its placeholders marked (what /send's parameters fill in). */
function Text(props: { text: string }) {
  return (
    <>
      {placeholderParts(props.text).map((p, i) =>
        p.placeholder ? (
          <span key={i} class="mono placeholder">
            {p.text}
          </span>
        ) : (
          p.text
        ),
      )}
    </>
  );
}

/** The template as a message shows it: header, body, footer, then its buttons. */
function Preview(props: { components: CloudTemplateComponent[] }) {
  const of = (type: CloudTemplateComponent['type']) => props.components.find((c) => c.type === type);
  const [header, body, footer, buttons] = [of('HEADER'), of('BODY'), of('FOOTER'), of('BUTTONS')];
  return (
    <div class="template-preview">
      {header &&
        (header.format === 'TEXT' ? (
          <p class="template-header" dir="auto">
            <Text text={header.text ?? ''} />
          </p>
        ) : (
          <p class="template-media">{mediaWords(header.format ?? '')} header</p>
        ))}
      {body && (
        <p class="template-body" dir="auto">
          <Text text={body.text ?? ''} />
        </p>
      )}
      {footer?.text && (
        <p class="template-footer" dir="auto">
          {footer.text}
        </p>
      )}
      {buttons?.buttons && buttons.buttons.length > 0 && (
        <ul class="template-buttons" aria-label="Buttons">
          {buttons.buttons.map((b, i) => (
            <li key={i}>
              <span class="template-button-text" dir="auto">
                {b.text ?? buttonKind(b)}
              </span>
              <span class="muted small">
                {buttonKind(b)}
                {b.url && (
                  <>
                    {': '}
                    <span class="mono">
                      <Text text={b.url} />
                    </span>
                  </>
                )}
                {b.phoneNumber && (
                  <>
                    {': '}
                    <span class="mono">{b.phoneNumber}</span>
                  </>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** One template: its name and status, its language, category and parameters, and how it reads. */
function TemplateCard(props: { t: CloudTemplate }) {
  const t = props.t;
  const status = templateStatusOf(t.status);
  const id = `template-${t.name}-${t.language}`;
  return (
    <li class="template" data-testid={id}>
      <article aria-labelledby={`${id}-name`}>
        <div class="template-head">
          <h3 id={`${id}-name`} class="mono">
            {t.name}
          </h3>
          <span
            class={`badge${status.band ? ` badge-${status.band}` : ''}`}
            title={templateStatusHint(t.status)}
            data-testid={`${id}-status`}
          >
            <span class="dot" aria-hidden="true" />
            {status.words}
          </span>
        </div>
        <div class="facts small">
          <div>
            <span class="muted">Language</span> <span class="mono">{t.language}</span>
          </div>
          <div>
            <span class="muted">Category</span> {categoryWords(t.category)}
          </div>
          <div>
            <span class="muted">Parameters</span> {parameterWords(t.parameters)}
          </div>
        </div>
        <Preview components={t.components} />
      </article>
    </li>
  );
}

/**
 * `/dashboard/devices/<id>/templates`: the message templates of a Cloud API number's WhatsApp
 * Business Account (the admin API's GET /devices/:deviceId/cloud/templates): each with its status,
 * language, category, the parameters /send gives it, and how it reads — placeholders marked —
 * filtered by a part of the name and by status. The list is the one the API keeps for /send
 * (read from Meta at most every 30 s): "Read again from Meta" asks for a fresh one. A device that
 * is not a Cloud API number says so, with the way to its settings.
 */
export function TemplatesPage(props: { deviceId: string }) {
  const device = encodeURIComponent(props.deviceId);
  const path = `/devices/${device}/cloud/templates`;
  // null: the device is not a Cloud API number.
  const [list, setList] = useState<CloudTemplates | null | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  const [name, setName] = useState('');
  const [status, setStatus] = useState('');

  const load = async (refresh: boolean) => {
    setBusy(true);
    setNotice(undefined);
    try {
      const r = await api<{ data: CloudTemplates }>(refresh ? `${path}?refresh=true` : path);
      setList(r.data);
      setError(undefined);
      if (refresh)
        setNotice(
          Date.now() - Date.parse(r.data.fetchedAt) < 5000
            ? { kind: 'success', text: 'Read again from Meta just now.' }
            : {
                kind: 'info',
                text: `Meta was asked ${ago(r.data.fetchedAt)}: it is asked again at most every 30 seconds.`,
              },
        );
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 404) setList(null);
      else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setList(undefined);
    void load(false);
  }, [path]);

  const all = list?.templates ?? [];
  const statuses = statusesOf(all);
  const shown = all.filter((t) => templateMatches(t, name, status));
  return (
    <section class="card cloud-templates" aria-labelledby="templates-title" data-testid="cloud-templates">
      <h2 id="templates-title">Message templates</h2>
      <p class="muted">
        The templates of the number’s WhatsApp Business Account, as Meta lists them. Only approved ones are
        sent: <span class="mono">/send</span> names one in <span class="mono">template</span> and gives the
        parameters its placeholders take.
      </p>
      {error && <Banner kind="error">Could not read the templates from Meta: {error}</Banner>}
      {list === null && (
        <Empty>
          This device is not a Cloud API number: templates are sent by Cloud API numbers only.{' '}
          <a href={`/dashboard/devices/${device}#${CLOUD_ANCHOR}`} onClick={onLink}>
            Cloud API settings
          </a>
        </Empty>
      )}
      {list === undefined && !error && <Spinner label="Reading the templates…" />}
      {list && (
        <>
          <div class="templates-toolbar">
            <div>
              <label for="template-name-filter">Name</label>
              <input
                id="template-name-filter"
                type="search"
                autocomplete="off"
                spellcheck={false}
                placeholder="order_update"
                value={name}
                onInput={(e) => setName((e.target as HTMLInputElement).value)}
              />
            </div>
            <div>
              <label for="template-status-filter">Status</label>
              <select
                id="template-status-filter"
                value={status}
                onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}
              >
                <option value="">Every status</option>
                {statuses.map((s) => (
                  <option key={s} value={s}>
                    {templateStatusOf(s).words}
                  </option>
                ))}
              </select>
            </div>
            <button type="button" class="secondary" disabled={busy} onClick={() => void load(true)}>
              {busy ? 'Asking Meta…' : 'Read again from Meta'}
            </button>
          </div>
          <p class="muted small templates-count" data-testid="templates-fetched">
            {shown.length === all.length
              ? `${all.length} ${all.length === 1 ? 'template' : 'templates'}`
              : `${shown.length} of ${all.length} templates`}
            , read from Meta <span title={exact(list.fetchedAt)}>{ago(list.fetchedAt)}</span>.
          </p>
          <NoticeBanner notice={notice} />
          {all.length === 0 ? (
            <Empty>
              The number’s WhatsApp Business Account has no template yet: create them in Meta’s WhatsApp
              Manager.
            </Empty>
          ) : shown.length === 0 ? (
            <Empty>No template matches: clear the name or choose “Every status”.</Empty>
          ) : (
            <ul class="template-list">
              {shown.map((t) => (
                <TemplateCard key={`${t.name}/${t.language}`} t={t} />
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
