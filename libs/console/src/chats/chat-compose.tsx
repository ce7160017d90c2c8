import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { Banner } from '../kit/ui';
import { chatPath } from './chat-actions';
import type { Chat } from './chat-row';

/** The public /send's attachment limit: 10 MB of file data (ATTACHMENT_MAX_BYTES). */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
/** WhatsApp's caption limit, as the public /send takes it (STRING_LIMITS.caption). */
const CAPTION_MAX_CHARS = 1024;

type AttachmentType = 'image' | 'video' | 'audio' | 'document';

/** What WhatsApp shows the file as: a photo, a video, a voice or audio file, else a document. */
export function attachmentTypeOf(mime: string): AttachmentType {
  if (/^image\/(jpeg|png|webp|gif)$/.test(mime)) return 'image';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}

const TYPE_LABEL: Record<AttachmentType, string> = {
  image: 'Image',
  video: 'Video',
  audio: 'Audio',
  document: 'Document',
};

/** A file's size as people read it (1 KB = 1,024 bytes, as the 10 MB limit counts). */
export function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [n, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KB'] : [bytes / (1024 * 1024), 'MB'];
  return `${n.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}

/** The file's bytes as base64 (what the public /send's `attachment.base64` takes). */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(new Error(`Could not read “${file.name}”`));
    reader.readAsDataURL(file);
  });
}

/** The public /send's attachment of a file, its caption the reply box's text. */
async function attachmentOf(file: File, caption: string): Promise<Record<string, string>> {
  const mime = /^[\w.+-]+\/[\w.+-]+$/.test(file.type) ? file.type : '';
  return {
    type: attachmentTypeOf(mime),
    base64: await base64Of(file),
    ...(file.name ? { filename: file.name } : {}),
    ...(mime ? { mimeType: mime } : {}),
    ...(caption ? { caption } : {}),
  };
}

/**
 * The operator's reply to the open chat — a text, or a file (image, video, audio, document) with
 * the box's text as its caption — sent as the public POST /send sends it (the paced queue, quotas,
 * opt-outs, the blocklist, its 10 MB attachment limit). Enter sends, Shift+Enter starts a new line.
 */
export function ReplyBox(props: { deviceId: string; chat: Chat; onSent: () => void }) {
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const sending = useRef(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const picker = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const clearFile = () => {
    setFile(undefined);
    if (picker.current) picker.current.value = '';
  };
  useEffect(() => {
    setText('');
    clearFile();
    setError(undefined);
  }, [props.deviceId, props.chat.id]);
  const choose = (chosen: File | undefined) => {
    setError(undefined);
    if (chosen && chosen.size > ATTACHMENT_MAX_BYTES) {
      clearFile();
      setError(
        `“${chosen.name}” is ${sizeOf(chosen.size)}: an attachment may be at most ${sizeOf(ATTACHMENT_MAX_BYTES)}.`,
      );
      return;
    }
    setFile(chosen);
  };
  const reply = text.trim();
  const tooLong = !!file && reply.length > CAPTION_MAX_CHARS;
  const ready = !busy && !tooLong && (!!file || !!reply);
  const send = async () => {
    // One send at a time: a second Enter or click before the page re-renders (the state still
    // says not busy) must not send the same reply twice.
    if (!ready || sending.current) return;
    sending.current = true;
    setBusy(true);
    setError(undefined);
    try {
      const json = file ? { attachment: await attachmentOf(file, reply) } : { text: reply };
      await api(`${chatPath(props.deviceId, props.chat.id)}/messages`, { json });
      setText('');
      clearFile();
      props.onSent();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      sending.current = false;
      setBusy(false);
    }
  };
  return (
    <form
      class="chat-reply"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      {error && <Banner kind="error">Could not send the reply: {error}</Banner>}
      {file && (
        <div class="chat-attachment" data-testid="chat-attachment">
          <span class="chat-attachment-name">
            <span class="chat-attachment-type">{TYPE_LABEL[attachmentTypeOf(file.type)]}</span>{' '}
            <bdi>{file.name}</bdi>
          </span>
          <span class="muted small">{sizeOf(file.size)}</span>
          <button
            type="button"
            class="link"
            aria-label={`Remove the attachment ${file.name}`}
            disabled={busy}
            onClick={() => {
              clearFile();
              box.current?.focus();
            }}
          >
            Remove
          </button>
        </div>
      )}
      <label for="chat-reply-text">{file ? 'Caption (optional)' : 'Reply'}</label>
      <div class="chat-reply-row">
        <textarea
          id="chat-reply-text"
          ref={box}
          rows={2}
          value={text}
          // Read-only, not disabled, while sending: the caret stays in the box for the next reply.
          readOnly={busy}
          aria-describedby="chat-reply-hint"
          aria-invalid={tooLong || undefined}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <span class="chat-attach">
          <input
            id="chat-attach"
            ref={picker}
            type="file"
            class="chat-attach-input"
            disabled={busy}
            aria-describedby="chat-reply-hint"
            onChange={(e) => choose((e.target as HTMLInputElement).files?.[0])}
          />
          <label for="chat-attach" class="button-link secondary">
            Attach
          </label>
        </span>
        <button type="submit" class="primary" disabled={!ready}>
          {busy ? 'Sending…' : 'Send'}
        </button>
      </div>
      <p id="chat-reply-hint" class="hint">
        {tooLong
          ? `A caption may be at most ${CAPTION_MAX_CHARS} characters (this one has ${reply.length}).`
          : `Enter sends, Shift+Enter starts a new line. Attach sends an image, video, audio or document of up to ${sizeOf(ATTACHMENT_MAX_BYTES)}, the text as its caption. The reply is queued and paced like any message the device sends.`}
      </p>
    </form>
  );
}
