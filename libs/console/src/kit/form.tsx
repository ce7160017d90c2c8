import { useState } from 'preact/hooks';
import { Banner } from './ui';

/**
 * The console's one create-or-save form pattern. `onSubmit` (the form's handler) keeps the page
 * from loading and calls `run`. `run` asks `opts.check` first (a message it answers is shown and
 * nothing is sent), then marks the form `busy`, clears its last `error` and calls `send`. When
 * `send` fails (the API refused), the failure's message (or what `opts.failure` makes of it)
 * becomes `error`, shown next to the form that caused it (FormActions, or
 * `{error && <Banner kind="error">{error}</Banner>}` where the form's layout wants it elsewhere).
 * `send` resets the form's fields itself after its API call, so they stay as typed on a failure.
 * `setError` puts another failure of the same place there (the tokens page's revoke).
 *
 * Use it for every form that sends something to the API when submitted, and for a lone button that
 * does the same with its error beside it (`onClick={() => void run()}`); a section with several
 * buttons that share one notice wants useAction (kit/action.ts) instead.
 */
export function useSubmit(
  send: () => Promise<void>,
  opts: { check?: () => string | undefined; failure?: (err: Error) => string } = {},
) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async () => {
    const invalid = opts.check?.();
    if (invalid) {
      setError(invalid);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await send();
    } catch (err) {
      setError(opts.failure ? opts.failure(err as Error) : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const onSubmit = (e: Event) => {
    e.preventDefault();
    void run();
  };
  return { busy, error, setError, run, onSubmit };
}

/**
 * The end of a form from useSubmit: its submit button (`busyLabel`, "Saving…" unless told, while
 * busy), a Cancel button when `onCancel` is given (an edit form that can be closed), and under
 * them the error the submit left.
 */
export function FormActions(props: {
  label: string;
  busy: boolean;
  busyLabel?: string;
  /** Disables the submit button (something required is missing); it is disabled while busy too. */
  disabled?: boolean;
  onCancel?: (() => void) | undefined;
  error: string | undefined;
}) {
  return (
    <>
      <div class="actions">
        <button type="submit" class="primary" disabled={props.busy || props.disabled}>
          {props.busy ? (props.busyLabel ?? 'Saving…') : props.label}
        </button>
        {props.onCancel && (
          <button type="button" class="secondary" disabled={props.busy} onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
      {props.error && <Banner kind="error">{props.error}</Banner>}
    </>
  );
}

/** The API's rule for the id of a pool or a workspace (`@mgw/contracts`' POOL_ID_PATTERN and
 * WORKSPACE_ID_PATTERN, both DEVICE_ID_PATTERN), as a form says it. */
export const ID_RULE = '1-32 characters: a-z, 0-9, _ or -, starting with a letter or digit';

/**
 * The id and name fields that open the create-or-edit form of a record the API keys by an id of
 * ID_RULE (a pool, a workspace): the id (`${noun} id`, required, fixed once made: disabled when
 * `editing`; `hint` under it when given) and the name (required, up to `nameMax` characters).
 * Their ids are `${prefix}-id` and `${prefix}-name`; `class` is the page's layout of the two.
 */
export function IdNameFields(props: {
  prefix: string;
  class: string;
  noun: string;
  editing: boolean;
  id: string;
  onId: (id: string) => void;
  idPlaceholder: string;
  hint?: string;
  name: string;
  onName: (name: string) => void;
  nameMax: number;
  namePlaceholder: string;
}) {
  const { prefix, hint } = props;
  return (
    <div class={props.class}>
      <div>
        <label for={`${prefix}-id`}>{`${props.noun} id`}</label>
        <input
          id={`${prefix}-id`}
          required
          disabled={props.editing}
          maxLength={32}
          placeholder={props.idPlaceholder}
          autocomplete="off"
          spellcheck={false}
          title={ID_RULE}
          aria-describedby={hint === undefined ? undefined : `${prefix}-id-hint`}
          value={props.id}
          onInput={(e) => props.onId((e.target as HTMLInputElement).value)}
        />
        {hint !== undefined && (
          <p id={`${prefix}-id-hint`} class="hint">
            {hint}
          </p>
        )}
      </div>
      <div>
        <label for={`${prefix}-name`}>Name</label>
        <input
          id={`${prefix}-name`}
          required
          maxLength={props.nameMax}
          placeholder={props.namePlaceholder}
          value={props.name}
          onInput={(e) => props.onName((e.target as HTMLInputElement).value)}
        />
      </div>
    </div>
  );
}
