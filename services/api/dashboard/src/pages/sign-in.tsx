import { useState } from 'preact/hooks';
import { ApiFailure, api, type Session } from '../api';
import { Banner } from '../ui';

export function SignIn(props: { notice?: string; onSignedIn: (s: Session) => void }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await api<Session>('/session', { json: { password } });
      setPassword('');
      props.onSignedIn(session);
    } catch (err) {
      const failure = err as ApiFailure;
      setError(failure.status === 401 ? 'That password is not right.' : failure.message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <form class="card sign-in-card" onSubmit={submit}>
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true">
            MG
          </span>
          Messenger Gateway
        </div>
        <h1>Sign in</h1>
        <p class="muted">Use the dashboard password of this gateway (ADMIN_PASSWORD).</p>
        {props.notice && !error && <Banner kind="info">{props.notice}</Banner>}
        {error && <Banner kind="error">{error}</Banner>}
        <label for="admin-password">Admin password</label>
        <input
          id="admin-password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary wide" disabled={busy || password.length === 0}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
