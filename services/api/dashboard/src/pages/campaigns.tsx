import { useEffect, useState } from 'preact/hooks';
import { api, type Device } from '../api';
import { navigate, query } from '../router';
import { Empty, Spinner } from '../ui';
import { ActivitySection } from './activity-chart';
import { BatchesSection } from './batches-section';
import '../campaigns.css';

/** The device whose campaigns are shown: `?device=` when given, else the first linked one, else the first. */
function chosenDevice(devices: Device[] | undefined): string {
  return query('device') ?? (devices?.find((d) => d.linked) ?? devices?.[0])?.deviceId ?? '';
}

/** Picks the device; the choice lives in the URL (`/dashboard/campaigns?device=ID`), so it can be shared. */
function DevicePicker(props: { devices: Device[]; deviceId: string }) {
  const { devices, deviceId } = props;
  return (
    <section class="card campaigns-toolbar">
      <label for="campaigns-device">Device</label>
      <select
        id="campaigns-device"
        value={deviceId}
        onChange={(e) =>
          navigate(`/dashboard/campaigns?device=${encodeURIComponent((e.target as HTMLSelectElement).value)}`)
        }
      >
        {devices.map((d) => (
          <option key={d.deviceId} value={d.deviceId}>
            {d.deviceId}
            {d.name ? ` — ${d.name}` : ''}
          </option>
        ))}
        {deviceId && !devices.some((d) => d.deviceId === deviceId) && (
          <option value={deviceId}>{deviceId}</option>
        )}
      </select>
    </section>
  );
}

/**
 * Campaigns (`/dashboard/campaigns?device=ID`): one device's sending to its lists. Sections, top
 * to bottom, each its own component keyed by the device: the activity of the last 24 hours
 * (activity-chart.tsx), then the device's lists with their progress and controls (batches-section.tsx).
 */
export function CampaignsPage() {
  const [devices, setDevices] = useState<Device[] | undefined>(undefined);
  useEffect(() => {
    api<{ devices: Device[] }>('/devices')
      .then((r) => setDevices(r.devices))
      .catch(() => setDevices([]));
  }, []);
  const deviceId = chosenDevice(devices);
  return (
    <>
      <div class="page-head">
        <h1>Campaigns</h1>
        <p class="muted">
          How a device&apos;s sending went, hour by hour, and its lists: progress, what waits, pause and
          cancel.
        </p>
      </div>
      {devices === undefined ? (
        <Spinner label="Loading devices…" />
      ) : !deviceId ? (
        <Empty>No devices yet: link one on the Devices page.</Empty>
      ) : (
        <>
          <DevicePicker devices={devices} deviceId={deviceId} />
          <ActivitySection key={deviceId} deviceId={deviceId} />
          <BatchesSection key={deviceId} deviceId={deviceId} />
        </>
      )}
    </>
  );
}
