import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, setCsrfToken, whenSignedOut, type Session } from './api';
import { navigate, usePath } from './router';
import { Layout } from './pages/layout';
import { SignIn } from './pages/sign-in';
import { DevicesPage } from './pages/devices';
import { TokensPage } from './pages/tokens';
import { PoolsPage } from './pages/pools';
import { MessagesPage } from './pages/messages';
import { ChatsPage } from './pages/chats';
import { BatchesPage } from './pages/batches';
import { DevicePage } from './pages/device-page';
import { Spinner } from './ui';
import './styles.css';
import './components.css';

type State = { kind: 'checking' } | { kind: 'signed-out'; notice?: string } | { kind: 'signed-in' };

function Page(props: { path: string }) {
  if (props.path.startsWith('/dashboard/settings')) return <TokensPage />;
  if (props.path.startsWith('/dashboard/messages')) return <MessagesPage />;
  if (props.path.startsWith('/dashboard/chats')) return <ChatsPage />;
  // `/dashboard/campaigns`: the page's old address, on its way to `/dashboard/batches` (App).
  if (/^\/dashboard\/(batches|campaigns)\b/.test(props.path)) return <BatchesPage />;
  if (props.path.startsWith('/dashboard/pools')) return <PoolsPage />;
  const device = /^\/dashboard\/devices\/([^/?]+)(?:\/([^/?]*))?/.exec(props.path);
  if (device) {
    const deviceId = decodeURIComponent(device[1]!);
    return <DevicePage key={deviceId} deviceId={deviceId} tab={device[2] ?? ''} />;
  }
  return <DevicesPage />;
}

function App() {
  const [state, setState] = useState<State>({ kind: 'checking' });
  const path = usePath();

  useEffect(() => {
    whenSignedOut(() => setState({ kind: 'signed-out', notice: 'Your session ended. Sign in again.' }));
    api<Session>('/session')
      .then((s) => {
        setCsrfToken(s.csrfToken ?? '');
        setState({ kind: 'signed-in' });
      })
      .catch(() => setState({ kind: 'signed-out' }));
  }, []);

  useEffect(() => {
    if (/^\/dashboard\/?(\?.*)?$/.test(path)) navigate('/dashboard/devices', true);
    // The Batches page was called Campaigns: its old address (bookmarks, links) opens it, query kept.
    const old = /^\/dashboard\/campaigns\/?(\?.*)?$/.exec(path);
    if (old) navigate(`/dashboard/batches${old[1] ?? ''}`, true);
  }, [path]);

  if (state.kind === 'checking') return <Spinner label="Loading…" />;
  if (state.kind === 'signed-out') {
    return (
      <SignIn
        notice={state.notice}
        onSignedIn={(s) => {
          setCsrfToken(s.csrfToken ?? '');
          setState({ kind: 'signed-in' });
        }}
      />
    );
  }
  const signOut = async () => {
    await api('/session', { method: 'DELETE' }).catch(() => undefined);
    setCsrfToken('');
    setState({ kind: 'signed-out', notice: 'You are signed out.' });
  };
  return (
    <Layout path={path} onSignOut={signOut}>
      <Page path={path} />
    </Layout>
  );
}

render(<App />, document.getElementById('app')!);
