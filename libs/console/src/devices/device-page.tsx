import type { ComponentType } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { onLink } from '../kit/router';
import { DeviceSettingsPage } from './device-settings';
import { DeviceEventsPage } from '../events/device-events';
import { StatusesPage } from '../statuses/device-statuses';
import { ChannelsPage } from '../channels/device-channels';
import { GroupsPage } from '../groups/device-groups';
import { LabelsPage } from '../labels/device-labels';

/**
 * One device's workspace: `/dashboard/devices/<id>` (its settings) and `/dashboard/devices/<id>/<tab>`
 * for what the account holds (groups, labels, statuses, channels, the event log). Each tab is a
 * page of its own file; this table is the one place that names them, in the order the tabs show.
 */
interface DeviceTab {
  /** The path's last segment ('' for the settings). */
  slug: string;
  label: string;
  Page: ComponentType<{ deviceId: string }>;
}

const TABS: DeviceTab[] = [
  { slug: '', label: 'Settings', Page: DeviceSettingsPage },
  { slug: 'groups', label: 'Groups', Page: GroupsPage },
  { slug: 'labels', label: 'Labels', Page: LabelsPage },
  { slug: 'statuses', label: 'Statuses', Page: StatusesPage },
  { slug: 'channels', label: 'Channels', Page: ChannelsPage },
  { slug: 'events', label: 'Events', Page: DeviceEventsPage },
];

const hrefOf = (deviceId: string, slug: string) =>
  `/dashboard/devices/${encodeURIComponent(deviceId)}${slug ? `/${slug}` : ''}`;

/** The device page a path names: its tab, or undefined when the tab is unknown. */
export function DevicePage(props: { deviceId: string; tab: string }) {
  const tab = TABS.find((t) => t.slug === props.tab);
  // On a phone the tabs scroll sideways: the current one is brought into view (the page stays put),
  // and again when the window's width changes (a phone turned).
  const nav = useRef<HTMLElement>(null);
  useEffect(() => {
    const centre = () => {
      const line = nav.current;
      const current = line?.querySelector('[aria-current="page"]');
      if (!line || !current || line.scrollWidth <= line.clientWidth) return;
      const [l, c] = [line.getBoundingClientRect(), current.getBoundingClientRect()];
      line.scrollLeft += c.left - l.left - (l.width - c.width) / 2;
    };
    centre();
    window.addEventListener('resize', centre);
    return () => window.removeEventListener('resize', centre);
  }, [tab?.slug]);
  // A tab the keyboard focuses comes wholly into view, with a glimpse of its neighbour (Chromium
  // scrolls a focused link only when less than 32 px of it shows: it would stay cut at the edge).
  const reveal = (e: FocusEvent) => {
    const line = nav.current;
    if (!line || !(e.target instanceof HTMLElement)) return;
    const [l, c] = [line.getBoundingClientRect(), e.target.getBoundingClientRect()];
    if (c.left < l.left) line.scrollLeft -= l.left - c.left + 24;
    else if (c.right > l.right) line.scrollLeft += c.right - l.right + 24;
  };
  if (!tab) {
    return (
      <div class="page-head">
        <a href="/dashboard/devices" onClick={onLink} class="back">
          ← Devices
        </a>
        <h1>No such page</h1>
        <p class="muted">
          A device has these pages: {TABS.map((t) => t.label).join(', ')}.{' '}
          <a href={hrefOf(props.deviceId, '')} onClick={onLink}>
            Open its settings
          </a>
          .
        </p>
      </div>
    );
  }
  return (
    <>
      <div class="page-head">
        <a href="/dashboard/devices" onClick={onLink} class="back">
          ← Devices
        </a>
        <h1>
          {tab.label} of <span class="mono">{props.deviceId}</span>
        </h1>
        <nav class="tabs device-tabs" aria-label="Device" ref={nav} onFocusIn={reveal}>
          {TABS.map((t) => (
            <a
              href={hrefOf(props.deviceId, t.slug)}
              onClick={onLink}
              class={t === tab ? 'active' : ''}
              aria-current={t === tab ? 'page' : undefined}
            >
              {t.label}
            </a>
          ))}
        </nav>
      </div>
      <tab.Page key={`${props.deviceId}/${tab.slug}`} deviceId={props.deviceId} />
    </>
  );
}
