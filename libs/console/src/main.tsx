import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, setCsrfToken, whenSignedOut, type Session } from './kit/api';
import { navigate, usePath } from './kit/router';
import { WhoContext, whoIs, type Who } from './kit/session';
import { Layout } from './kit/layout';
import { SignIn } from './session/sign-in';
import { DevicesPage } from './devices/devices';
import { TokensPage } from './tokens/tokens';
import { PoolsPage } from './pools/pools';
import { MessagesPage } from './messages/messages';
import { ChatsPage } from './chats/chats';
import { BatchesPage } from './batches/batches';
import { DevicePage } from './devices/device-page';
import { WorkspacesPage } from './workspaces/workspaces';
import { WorkspacePage } from './workspaces/workspace';
import { Spinner } from './kit/ui';
import './kit/styles.css';
import './kit/components.css';

type State =
  { kind: 'checking' } | { kind: 'signed-out'; notice?: string } | { kind: 'signed-in'; session: Session };

function Page(props: { path: string; who: Who }) {
  const { path, who } = props;
  if (path.startsWith('/dashboard/settings')) return <TokensPage />;
  if (path.startsWith('/dashboard/messages')) return <MessagesPage />;
  if (path.startsWith('/dashboard/chats')) return <ChatsPage />;
  // `/dashboard/campaigns`: the page's old address, on its way to `/dashboard/batches` (App).
  if (/^\/dashboard\/(batches|campaigns)\b/.test(path)) return <BatchesPage />;
  if (path.startsWith('/dashboard/pools')) return <PoolsPage />;
  // The operator's list of workspaces; a workspace's own page (its session's workspace).
  if (/^\/dashboard\/workspaces\b/.test(path) && who.operator) return <WorkspacesPage />;
  if (/^\/dashboard\/workspace\b/.test(path) && who.workspace) return <WorkspacePage />;
  const device = /^\/dashboard\/devices\/([^/?]+)(?:\/([^/?]*))?/.exec(path);
  if (device) {
    const deviceId = decodeURIComponent(device[1]!);
    return <DevicePage key={deviceId} deviceId={deviceId} tab={device[2] ?? ''} />;
  }
  return <DevicesPage />;
}

/** Where a session starts: the operator on its devices, a workspace's people on their workspace. */
const homeOf = (who: Who) => (who.operator ? '/dashboard/devices' : '/dashboard/workspace');

function App() {
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [leaving, setLeaving] = useState(false);
  const path = usePath();

  const signedIn = (s: Session) => {
    setCsrfToken(s.csrfToken ?? '');
    setState({ kind: 'signed-in', session: s });
  };

  useEffect(() => {
    whenSignedOut(() => setState({ kind: 'signed-out', notice: 'Your session ended. Sign in again.' }));
    api<Session>('/session')
      .then(signedIn)
      .catch(() => setState({ kind: 'signed-out' }));
  }, []);

  const session = state.kind === 'signed-in' ? state.session : undefined;
  const who = useMemo(
    () =>
      session &&
      whoIs(session, async (to) => {
        const s = await api<Session>('/session');
        signedIn(s);
        navigate(to);
      }),
    [session],
  );

  useEffect(() => {
    if (/^\/dashboard\/?(\?.*)?$/.test(path)) navigate(who ? homeOf(who) : '/dashboard/devices', true);
    // The Batches page was called Campaigns: its old address (bookmarks, links) opens it, query kept.
    const old = /^\/dashboard\/campaigns\/?(\?.*)?$/.exec(path);
    if (old) navigate(`/dashboard/batches${old[1] ?? ''}`, true);
    // A page of the other scope (a bookmark, the address typed): the session's own home instead.
    if (who && /^\/dashboard\/workspaces\b/.test(path) && !who.operator) navigate(homeOf(who), true);
    if (who && /^\/dashboard\/workspace\b/.test(path) && !who.workspace)
      navigate('/dashboard/workspaces', true);
  }, [path, who]);

  if (state.kind === 'checking' || !who) {
    if (state.kind !== 'signed-out') return <Spinner label="Loading…" />;
    return (
      <SignIn
        notice={state.notice}
        onSignedIn={(s) => {
          signedIn(s);
          // A workspace's people start on their workspace (the operator where the address says).
          if (s.workspace && /^\/dashboard\/?(devices)?\/?(\?.*)?$/.test(location.pathname + location.search))
            navigate('/dashboard/workspace', true);
        }}
      />
    );
  }
  const signOut = async () => {
    await api('/session', { method: 'DELETE' }).catch(() => undefined);
    setCsrfToken('');
    setState({ kind: 'signed-out', notice: 'You are signed out.' });
  };
  const leaveWorkspace = async () => {
    setLeaving(true);
    try {
      await api('/session/workspace', { method: 'DELETE' });
      await who.reload('/dashboard/workspaces');
    } catch {
      // The session ended meanwhile (a 401 signs the page out); else stay and let the page say.
    } finally {
      setLeaving(false);
    }
  };
  // A new scope is a new shell: every page mounts again and loads what this session sees.
  const scope = `${who.role}:${who.workspace?.id ?? ''}:${who.session.user ?? ''}`;
  return (
    <WhoContext.Provider value={who}>
      <Layout
        key={scope}
        path={path}
        onSignOut={() => void signOut()}
        onLeaveWorkspace={() => void leaveWorkspace()}
        leaving={leaving}
      >
        <Page path={path} who={who} />
      </Layout>
    </WhoContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
