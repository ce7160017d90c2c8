import type { ComponentChildren } from 'preact';
import { onLink } from './router';
import { useWho, whoLabel, type Who } from './session';
import './layout.css';

interface NavItem {
  href: string;
  label: string;
  /** Who sees it: every session (absent), the operator's own view, or a workspace's. */
  only?: 'operator' | 'workspace';
}

const NAV: NavItem[] = [
  { href: '/dashboard/workspaces', label: 'Workspaces', only: 'operator' },
  { href: '/dashboard/workspace', label: 'Workspace', only: 'workspace' },
  { href: '/dashboard/devices', label: 'Devices' },
  { href: '/dashboard/pools', label: 'Pools' },
  { href: '/dashboard/messages', label: 'Messages' },
  { href: '/dashboard/chats', label: 'Chats' },
  { href: '/dashboard/batches', label: 'Batches' },
  { href: '/dashboard/settings/api', label: 'Settings' },
];

/** The pages a session sees in the top bar (the operator's own pages only in its own view). */
export function navFor(who: Who): NavItem[] {
  return NAV.filter((n) => !n.only || (n.only === 'operator' ? who.operator : !who.operator));
}

/** Whether `path` is the page of `href` (`/dashboard/workspace` is not `/dashboard/workspaces`). */
const isAt = (path: string, href: string) => {
  const base = href.replace(/\/api$/, '');
  return path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`);
};

/**
 * The operator looking at a workspace as its admin sees it: said on every page, with the way back
 * to the operator's own view.
 */
function ViewingBanner(props: { name: string; onBack: () => void; busy: boolean }) {
  return (
    <div class="viewing-banner" role="region" aria-label="Viewing a workspace">
      <p>
        Viewing <strong>{props.name}</strong> as its admin: you see and change only what this workspace owns.
      </p>
      <button type="button" class="secondary small-button" disabled={props.busy} onClick={props.onBack}>
        {props.busy ? 'Going back…' : 'Back to all workspaces'}
      </button>
    </div>
  );
}

export function Layout(props: {
  path: string;
  onSignOut: () => void;
  /** The operator viewing a workspace: back to its own view (DELETE /session/workspace). */
  onLeaveWorkspace: () => void;
  leaving: boolean;
  children: ComponentChildren;
}) {
  const who = useWho();
  const home = who.operator ? '/dashboard/devices' : '/dashboard/workspace';
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href={home} onClick={onLink}>
          <span class="logo" aria-hidden="true">
            MG
          </span>
          <span class="brand-name">Messenger Gateway</span>
        </a>
        <nav aria-label="Main">
          {navFor(who).map((n) => (
            <a
              href={n.href}
              onClick={onLink}
              class={isAt(props.path, n.href) ? 'active' : ''}
              aria-current={isAt(props.path, n.href) ? 'page' : undefined}
            >
              {n.label}
            </a>
          ))}
          <a href="/docs" target="_blank" rel="noopener">
            API reference
          </a>
        </nav>
        <div class="signed-in">
          <span class="who" data-testid="signed-in-as" title={`Signed in: ${whoLabel(who)}`}>
            {whoLabel(who)}
          </span>
          <button type="button" class="link sign-out" onClick={props.onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      {who.session.viewing && (
        <ViewingBanner
          name={who.workspace?.name ?? who.workspace?.id ?? ''}
          busy={props.leaving}
          onBack={props.onLeaveWorkspace}
        />
      )}
      <main class="content">{props.children}</main>
    </div>
  );
}
