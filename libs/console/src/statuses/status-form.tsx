import { useState } from 'preact/hooks';
import { api } from '../kit/api';
import { Card, NoticeBanner } from '../kit/ui';

/** WhatsApp's status fonts, as POST /statuses names them (STATUS_FONTS of libs/contracts). */
const FONTS: [string, string][] = [
  ['', 'Default'],
  ['system', 'System'],
  ['system_text', 'System text'],
  ['fb_script', 'Script'],
  ['system_bold', 'System bold'],
  ['morningbreeze', 'Morning Breeze'],
  ['calistoga', 'Calistoga'],
  ['exo2', 'Exo 2'],
  ['courierprime', 'Courier Prime'],
];

type Kind = 'text' | 'image' | 'video';
type Notice = { kind: 'error' | 'success'; text: string } | undefined;

/** Numbers as the API takes them: digits (a typed "+", spaces or dashes dropped), or `<digits>@lid`. */
export function audienceOf(raw: string): string[] {
  const entries = raw
    .split(/[\s,;]+/)
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => (/@lid$/i.test(e) ? e.toLowerCase() : e.replace(/[^\d]/g, '')))
    .filter(Boolean);
  return [...new Set(entries)];
}

/**
 * Posting a status (POST /devices/:deviceId/statuses, the public POST /statuses): a text with its
 * background and font, or a picture or video by URL with a caption; to the numbers listed or to
 * every chat of the account; now or at a time (the API's `sendAt`).
 */
export function StatusForm(props: { deviceId: string; onPosted: () => void }) {
  const [kind, setKind] = useState<Kind>('text');
  const [text, setText] = useState('');
  const [color, setColor] = useState('#0b7a66');
  const [font, setFont] = useState('');
  const [url, setUrl] = useState('');
  const [everyone, setEveryone] = useState(false);
  const [numbers, setNumbers] = useState('');
  const [later, setLater] = useState(false);
  const [at, setAt] = useState('');
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setNotice(undefined);
    try {
      const json: Record<string, unknown> = {
        audience: everyone ? 'contacts' : audienceOf(numbers),
      };
      if (text.trim()) json.text = text.trim();
      if (kind === 'text') {
        json.backgroundColor = color;
        if (font) json.font = font;
      } else {
        json.attachment = { type: kind, url: url.trim() };
      }
      if (later && at) json.sendAt = new Date(at).toISOString();
      const r = await api<{ data: { audienceSize: number; sendAt?: string } }>(
        `/devices/${encodeURIComponent(props.deviceId)}/statuses`,
        { json },
      );
      const who = `${r.data.audienceSize} ${r.data.audienceSize === 1 ? 'viewer' : 'viewers'}`;
      setNotice({
        kind: 'success',
        text: r.data.sendAt
          ? `Status scheduled for ${new Date(r.data.sendAt).toLocaleString()}, to ${who}.`
          : `Status queued for ${who}.`,
      });
      setText('');
      setUrl('');
      props.onPosted();
    } catch (err) {
      setNotice({ kind: 'error', text: `Could not post the status: ${(err as Error).message}` });
    } finally {
      setBusy(false);
    }
  };

  const ready =
    (kind === 'text' ? text.trim() !== '' : url.trim() !== '') &&
    (everyone || audienceOf(numbers).length > 0) &&
    (!later || at !== '');

  return (
    <Card id="status-form-title" title="Post a status">
      <p class="muted">
        Seen for 24 hours by the viewers you name. It goes through the device's queue like any message (paced,
        held by quiet hours), once, whatever the number of viewers.
      </p>
      <form onSubmit={(e) => void submit(e)} class="status-form">
        <fieldset class="checks">
          <legend>What</legend>
          {(['text', 'image', 'video'] as const).map((k) => (
            <label class="check" key={k}>
              <input type="radio" name="status-kind" checked={kind === k} onChange={() => setKind(k)} />
              {k === 'text' ? 'Text' : k === 'image' ? 'Picture' : 'Video'}
            </label>
          ))}
        </fieldset>
        {kind !== 'text' && (
          <label>
            {kind === 'image' ? 'Picture URL' : 'Video URL'}
            <input
              type="url"
              value={url}
              placeholder="https://example.com/menu.jpg"
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
          </label>
        )}
        <label>
          {kind === 'text' ? 'Status text' : 'Caption (optional)'}
          <textarea
            rows={3}
            maxLength={700}
            dir="auto"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
        {kind === 'text' && (
          <div class="status-style">
            <label>
              Background colour
              <input type="color" value={color} onInput={(e) => setColor(e.currentTarget.value)} />
            </label>
            <label>
              Font
              <select value={font} onChange={(e) => setFont(e.currentTarget.value)}>
                {FONTS.map(([value, label]) => (
                  <option value={value} key={value}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <div
              class="status-preview"
              aria-hidden="true"
              style={{ background: color }}
              data-testid="status-preview"
            >
              <span dir="auto">{text || 'Preview'}</span>
            </div>
          </div>
        )}
        <fieldset class="checks">
          <legend>Who sees it</legend>
          <label class="check">
            <input
              type="radio"
              name="status-audience"
              checked={!everyone}
              onChange={() => setEveryone(false)}
            />
            These numbers
          </label>
          <label class="check">
            <input
              type="radio"
              name="status-audience"
              checked={everyone}
              onChange={() => setEveryone(true)}
            />
            Everyone the account has a chat with
          </label>
        </fieldset>
        {!everyone && (
          <label>
            Viewers' numbers (one per line or comma-separated, at most 5,000)
            <textarea
              rows={2}
              inputMode="tel"
              placeholder="15551234567, 15557654321"
              value={numbers}
              onInput={(e) => setNumbers(e.currentTarget.value)}
            />
          </label>
        )}
        <fieldset class="checks">
          <legend>When</legend>
          <label class="check">
            <input type="radio" name="status-when" checked={!later} onChange={() => setLater(false)} />
            Now
          </label>
          <label class="check">
            <input type="radio" name="status-when" checked={later} onChange={() => setLater(true)} />
            Later
          </label>
        </fieldset>
        {later && (
          <label>
            Send at (your local time)
            <input type="datetime-local" value={at} onInput={(e) => setAt(e.currentTarget.value)} />
          </label>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !ready}>
            {busy ? 'Posting…' : later ? 'Schedule status' : 'Post status'}
          </button>
        </div>
      </form>
      <NoticeBanner notice={notice} />
    </Card>
  );
}
