import { useEffect, useState } from 'preact/hooks';
import { api, type Device } from '../kit/api';
import { navigate, query } from '../kit/router';
import { Empty, Spinner } from '../kit/ui';
import { ActivitySection } from '../activity/activity-chart';
import { BatchesSection } from './batches-section';
import './batches.css';

/** The device whose batches are shown: `?device=` when given, else the first linked one, else the first. */
function chosenDevice(devices: Device[] | undefined): string {
  return query('device') ?? (devices?.find((d) => d.linked) ?? devices?.[0])?.deviceId ?? '';
}

/** Picks the device; the choice lives in the URL (`/dashboard/batches?device=ID`), so it can be shared. */
function DevicePicker(props: { devices: Device[]; deviceId: string }) {
  const { devices, deviceId } = props;
  return (
    <section class="card batches-toolbar">
      <label for="batches-device">Device</label>
      <select
        id="batches-device"
        value={deviceId}
        onChange={(e) =>
          navigate(`/dashboard/batches?device=${encodeURIComponent((e.target as HTMLSelectElement).value)}`)
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
 * Batches (`/dashboard/batches?device=ID`; the old `/dashboard/campaigns` leads here): one device's
 * sending and its batches. Sections, top to bottom, each its own component keyed by the device: the
 * activity of the last 24 hours (activity-chart.tsx), then the device's batches with their progress
 * and controls (batches-section.tsx).
 */
export function BatchesPage() {
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
        <h1>Batches</h1>
        <p class="muted">
          How a device&apos;s sending went, hour by hour, and its batches (one per send to several numbers):
          progress, what waits, pause and cancel.
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
