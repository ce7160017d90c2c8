import type { ComponentType } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Device, type DeviceEngine } from '../kit/api';
import { onLink } from '../kit/router';
import { Empty, Spinner } from '../kit/ui';
import { TemplatesPage } from '../cloud/cloud-templates';
import { DeviceSettingsPage } from './device-settings';
import { DeviceEventsPage } from '../events/device-events';
import { StatusesPage } from '../statuses/device-statuses';
import { ChannelsPage } from '../channels/device-channels';
import { GroupsPage } from '../groups/device-groups';
import { LabelsPage } from '../labels/device-labels';

/** What a tab's page is given: the device's id, the device as read (the settings need it), its engine's changes. */
export interface DeviceTabProps {
  deviceId: string;
  /** GET /devices/:deviceId's device; null when it could not be read; undefined while it is read. */
  device: Device | null | undefined;
  /** The page learned the device changed engine (its Cloud API number configured or forgotten). */
  onEngine: (engine: DeviceEngine) => void;
}

/**
 * One device's workspace: `/dashboard/devices/<id>` (its settings) and `/dashboard/devices/<id>/<tab>`
 * for what the account holds (groups, labels, statuses, channels, the event log) or, for a Cloud
 * API number, its message templates. Each tab is a page of its own file; this table is the one
 * place that names them, in the order the tabs show, and the engine each is for: a Cloud API
 * number has no WhatsApp account of its own (no groups, labels, statuses or channels), a device
 * linked by QR or code no templates.
 */
interface DeviceTab {
  /** The path's last segment ('' for the settings). */
  slug: string;
  label: string;
  Page: ComponentType<DeviceTabProps>;
  /** Shown only for a device of this engine (absent: every device). */
  engine?: DeviceEngine;
}

const TABS: DeviceTab[] = [
  { slug: '', label: 'Settings', Page: DeviceSettingsPage },
  { slug: 'templates', label: 'Templates', Page: TemplatesPage, engine: 'cloud' },
  { slug: 'groups', label: 'Groups', Page: GroupsPage, engine: 'linked' },
  { slug: 'labels', label: 'Labels', Page: LabelsPage, engine: 'linked' },
  { slug: 'statuses', label: 'Statuses', Page: StatusesPage, engine: 'linked' },
  { slug: 'channels', label: 'Channels', Page: ChannelsPage, engine: 'linked' },
  { slug: 'events', label: 'Events', Page: DeviceEventsPage },
];

/** What a tab of the other engine's says instead of its page (the device changed engine, or an old link). */
const WRONG_ENGINE: Record<DeviceEngine, string> = {
  linked: 'belong to a device linked by QR or pairing code: this device is a Cloud API number.',
  cloud: 'belong to a Cloud API number: this device is not one.',
};

/**
 * The device as the Devices page lists it (GET /devices/:deviceId): its engine, and whether it is
 * linked by QR or pairing code. Null when it could not be read (the tabs say their own errors).
 */
function useDevice(deviceId: string): Device | null | undefined {
  const [device, setDevice] = useState<Device | null | undefined>(undefined);
  useEffect(() => {
    api<{ device: Device }>(`/devices/${encodeURIComponent(deviceId)}`)
      .then((r) => setDevice(r.device))
      .catch(() => setDevice(null));
  }, [deviceId]);
  return device;
}

const hrefOf = (deviceId: string, slug: string) =>
  `/dashboard/devices/${encodeURIComponent(deviceId)}${slug ? `/${slug}` : ''}`;

/** The device page a path names: its tab, or undefined when the tab is unknown. */
export function DevicePage(props: { deviceId: string; tab: string }) {
  const device = useDevice(props.deviceId);
  // The engine as the device was read (a device that could not be read: linked, as every device
  // was before the Cloud API), then as the settings last said (configured or forgotten there).
  const [changed, setChanged] = useState<DeviceEngine | undefined>(undefined);
  const engine = changed ?? (device === undefined ? undefined : (device?.engine ?? 'linked'));
  // Until the engine is known (the tab bar waits for it), the tabs every device has.
  const tabs = TABS.filter((t) => !t.engine || t.engine === engine);
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
  }, [tab?.slug, engine]);
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
          A device has these pages: {tabs.map((t) => t.label).join(', ')}.{' '}
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
        {/* Once the engine is known: the tabs of this device, never some of them popping in later. */}
        {engine !== undefined && (
          <nav class="tabs device-tabs" aria-label="Device" ref={nav} onFocusIn={reveal}>
            {tabs.map((t) => (
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
        )}
      </div>
      {tab.engine && engine === undefined ? (
        <Spinner label="Loading the device…" />
      ) : tab.engine && tab.engine !== engine ? (
        <div class="card">
          <Empty>
            {tab.label} {WRONG_ENGINE[tab.engine]}{' '}
            <a href={hrefOf(props.deviceId, '')} onClick={onLink}>
              Open its settings
            </a>
          </Empty>
        </div>
      ) : (
        <tab.Page
          key={`${props.deviceId}/${tab.slug}`}
          deviceId={props.deviceId}
          device={device}
          onEngine={setChanged}
        />
      )}
    </>
  );
}
