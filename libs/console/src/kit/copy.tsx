import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * Copying a value the page shows: `copy(text, testId)` puts it on the clipboard and sets `copied`;
 * where the browser refuses (no permission, plain HTTP) it selects the element with that
 * data-testid instead, so Ctrl-C works. Use it with CopyRow.
 */
export function useCopy() {
  const [copied, setCopied] = useState(false);
  const copy = async (text: string, testId: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      const el = document.querySelector(`[data-testid="${testId}"]`);
      if (el) window.getSelection()?.selectAllChildren(el);
    }
  };
  return { copied, setCopied, copy };
}

/** A value to copy (a secret, a link) in a <code>, and its Copy button ("Copied" once it is). */
export function CopyRow(props: { value: string; testId: string; label?: string }) {
  const { copied, copy } = useCopy();
  return <CopyRowOf {...props} copied={copied} onCopy={() => void copy(props.value, props.testId)} />;
}

/** CopyRow whose `copied` state the caller keeps (useCopy), to reset it when the value changes. */
export function CopyRowOf(props: {
  value: string;
  testId: string;
  label?: string | undefined;
  copied: boolean;
  onCopy: () => void;
}) {
  return (
    <div class="secret-row">
      <code data-testid={props.testId}>{props.value}</code>
      <button type="button" class="secondary" onClick={props.onCopy}>
        {props.copied ? 'Copied' : (props.label ?? 'Copy')}
      </button>
    </div>
  );
}

/**
 * A secret shown this once (a new API token, a webhook's signing secret): it lives only in the
 * caller's state, never in the URL or the browser's storage, and goes when "Done" is pressed.
 */
export function ShownOnce(props: {
  title: ComponentChildren;
  children: ComponentChildren;
  value: string;
  testId: string;
  onDone: () => void;
}) {
  return (
    <div class="new-token" role="status">
      <h3>{props.title}</h3>
      <p>{props.children}</p>
      <CopyRow value={props.value} testId={props.testId} />
      <button type="button" class="link" onClick={props.onDone}>
        Done, hide it
      </button>
    </div>
  );
}
