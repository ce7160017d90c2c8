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
