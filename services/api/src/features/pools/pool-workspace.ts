/**
 * A pool belongs to one workspace (docs/workspaces.md "The console"), and so do all its devices: a
 * list spread over a pool never goes out through another workspace's account, and only the pool's
 * workspace's tokens send through it (http/auth.ts).
 */

/** What a pool definition's devices are held against: who owns each (default: those no workspace names). */
export interface DeviceOwners {
  ownerOf(deviceId: string): Promise<string>;
}

/**
 * The places in `devices` of those `workspace` does not own — another workspace's and, for a
 * workspace other than default, a device nobody has alike (default owns every device no workspace
 * names, linked or not): each is refused as an unknown device is.
 */
export async function foreignDevices(
  owners: DeviceOwners,
  workspace: string,
  devices: readonly string[],
): Promise<number[]> {
  const owner = await Promise.all(devices.map((d) => owners.ownerOf(d)));
  return owner.flatMap((o, i) => (o === workspace ? [] : [i]));
}
