import type { ComponentChildren } from 'preact';
import { onLink } from '../router';

const NAV = [
  { href: '/dashboard/devices', label: 'Devices' },
  { href: '/dashboard/pools', label: 'Pools' },
  { href: '/dashboard/messages', label: 'Messages' },
  { href: '/dashboard/chats', label: 'Chats' },
  { href: '/dashboard/batches', label: 'Batches' },
  { href: '/dashboard/settings/api', label: 'Settings' },
];

export function Layout(props: { path: string; onSignOut: () => void; children: ComponentChildren }) {
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href="/dashboard/devices" onClick={onLink}>
          <span class="logo" aria-hidden="true">
            MG
          </span>
          <span class="brand-name">Messenger Gateway</span>
        </a>
        <nav aria-label="Main">
          {NAV.map((n) => (
            <a
              href={n.href}
              onClick={onLink}
              class={props.path.startsWith(n.href.replace(/\/api$/, '')) ? 'active' : ''}
              aria-current={props.path.startsWith(n.href.replace(/\/api$/, '')) ? 'page' : undefined}
            >
              {n.label}
            </a>
          ))}
          <a href="/docs" target="_blank" rel="noopener">
            API reference
          </a>
        </nav>
        <button type="button" class="link sign-out" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main class="content">{props.children}</main>
    </div>
  );
}
