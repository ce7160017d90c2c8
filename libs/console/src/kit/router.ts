import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

/** Client-side navigation: every dashboard URL is the same page, so links change the path only. */
export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listeners.forEach((l) => l());
}

/** The current path and query (a change of either re-renders). */
export function usePath(): string {
  const here = () => location.pathname + location.search;
  const [path, setPath] = useState(here());
  useEffect(() => {
    const update = () => setPath(here());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

export function query(name: string): string | undefined {
  return new URLSearchParams(location.search).get(name) ?? undefined;
}

/** A link that navigates without reloading (a plain link with a modifier key opens a tab as usual). */
export function onLink(e: MouseEvent): void {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? undefined;
  if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute('href') ?? '/dashboard');
}
