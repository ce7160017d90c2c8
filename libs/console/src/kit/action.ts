import { useState } from 'preact/hooks';

/** What a section says after an action: how it went, in a Banner of that kind. */
export type Notice = { kind: 'error' | 'success' | 'info'; text: string } | undefined;

/**
 * The console's one pattern for a section's buttons that change something through the API and
 * share one notice: `act(change, failure)` marks the section busy, clears the last notice and runs
 * `change`. The text `change` answers becomes the success notice (none when it answers nothing);
 * a failure becomes the error notice `say(failure, err)` (by default `failure` followed by the
 * API's message). Answers whether the change went through.
 *
 * A form that sends when submitted, its error beside it, wants useSubmit (kit/form.tsx) instead.
 */
export function useAction(
  say: (failure: string, err: Error) => string = (failure, err) => failure + err.message,
) {
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  const act = async (change: () => Promise<string | undefined>, failure: string): Promise<boolean> => {
    setBusy(true);
    setNotice(undefined);
    try {
      const done = await change();
      if (done) setNotice({ kind: 'success', text: done });
      return true;
    } catch (err) {
      setNotice({ kind: 'error', text: say(failure, err as Error) });
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, notice, setNotice, act };
}

/**
 * The console's one pattern for a page's row actions that change one row through the API, some
 * asked first in a Confirm (delete a pool, remove a user, suspend a workspace): `asking` is the row
 * the Confirm asks about (`ask(row)` opens it, `ask(undefined)` closes it); `run(key, change,
 * failure)` marks that row busy (`busy === key`, for its buttons and the Confirm's `busy`), runs
 * `change`, whose answer becomes the success notice (none when it answers nothing) and a failure
 * the error notice `${failure}: ${message}`, then clears `busy` and closes the Confirm. A notice stays until the
 * next one replaces it; `setNotice` says how another step of the page went (a form saved).
 *
 * Buttons that share one busy flag for the whole section want useAction instead.
 */
export function useConfirmed<T>() {
  const [asking, ask] = useState<T | undefined>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState<Notice>(undefined);
  const run = async (key: string, change: () => Promise<string | void>, failure: string) => {
    setBusy(key);
    try {
      const done = await change();
      if (done) setNotice({ kind: 'success', text: done });
    } catch (err) {
      setNotice({ kind: 'error', text: `${failure}: ${(err as Error).message}` });
    } finally {
      setBusy(undefined);
      ask(undefined);
    }
  };
  return { asking, ask, busy, notice, setNotice, run };
}
