import { useState } from 'preact/hooks';
import { ApiFailure, api, type Session } from '../kit/api';
import { useSubmit } from '../kit/form';
import { Banner } from '../kit/ui';
import './sign-in.css';

/**
 * Sign-in: a workspace user with their user name and password, or the operator with the admin
 * password alone (the user name left empty). A wrong name or password is one answer (401), so the
 * page never says which.
 */
export function SignIn(props: { notice?: string; onSignedIn: (s: Session) => void }) {
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const name = user.trim();
  const { busy, error, onSubmit } = useSubmit(
    async () => {
      const session = await api<Session>('/session', {
        json: name ? { user: name, password } : { password },
      });
      setPassword('');
      props.onSignedIn(session);
    },
    {
      failure: (err) =>
        (err as ApiFailure).status === 401
          ? name
            ? 'That user name or password is not right.'
            : 'That password is not right.'
          : err.message,
    },
  );

  return (
    <main class="sign-in">
      <form class="card sign-in-card" onSubmit={onSubmit}>
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true">
            MG
          </span>
          Messenger Gateway
        </div>
        <h1>Sign in</h1>
        <p class="muted">
          With your user name and password, or as the operator: leave the user name empty and use the
          gateway's admin password (ADMIN_PASSWORD).
        </p>
        {props.notice && !error && <Banner kind="info">{props.notice}</Banner>}
        {error && <Banner kind="error">{error}</Banner>}
        <label for="sign-in-user">User name</label>
        <input
          id="sign-in-user"
          class="sign-in-user"
          autocomplete="username"
          autocapitalize="none"
          spellcheck={false}
          aria-describedby="sign-in-user-hint"
          value={user}
          onInput={(e) => setUser((e.target as HTMLInputElement).value)}
        />
        <p id="sign-in-user-hint" class="hint sign-in-hint">
          Optional: empty signs in the operator.
        </p>
        <label for="admin-password">{user.trim() ? 'Password' : 'Admin password'}</label>
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
