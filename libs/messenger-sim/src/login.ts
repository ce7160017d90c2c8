import { jidEncode, type proto } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { Faults } from './faults.js';
import type { SimLogger } from './logger.js';
import type { DirectoryContext } from './sim-context.js';
import { node, unixSeconds } from './stanza.js';

/** What a login needs of the simulator. */
export interface LoginContext extends DirectoryContext {
  readonly faults: Faults;
  readonly logger: SimLogger;
}

/**
 * A login: the client names its device (`username` + `device`) and proves it with the Noise
 * static key it registered while pairing. Removed, unknown or refused devices get `<failure>`.
 */
export function handleLogin(sim: LoginContext, conn: ClientConnection, payload: proto.ClientPayload): void {
  const phone = String(payload.username ?? '');
  const deviceId = Number(payload.device ?? 0);
  const account = sim.directory.get(phone);
  const device = account?.devices.get(deviceId);
  const refusal = sim.faults.takeRefusal(phone);
  if (!account || !device || !conn.clientStaticKey?.equals(device.noiseKey) || refusal !== undefined) {
    const reason = refusal ?? 401;
    sim.logger.info({ phone, deviceId, reason }, 'login refused');
    conn.endWith(node('failure', { reason: String(reason), location: 'sim' }));
    return;
  }
  const previous = device.connection;
  if (previous && previous !== conn) {
    // a newer socket for the same device replaces the old one, as on the real service
    previous.endWith(node('stream:error', {}, [node('conflict', { type: 'replaced' })]));
  }
  conn.account = account;
  conn.device = device;
  device.connection = conn;
  sim.logger.debug({ phone, deviceId }, 'device logged in');
  conn.send(
    node('success', {
      t: unixSeconds(),
      props: '1',
      abprops: '1',
      location: 'sim',
      lid: jidEncode(account.lid, 'lid', deviceId),
      creation: unixSeconds(),
      display_name: account.name,
    }),
  );
  conn.send(node('ib', {}, [node('offline', { count: '0' })]));
  const pending = device.pending.splice(0);
  for (const stanza of pending) conn.send(stanza);
}

/**
 * A `<success>` on a registration socket, before any pairing (the `early-success` fault): nothing
 * is logged in, and a client must not take it for a login (whatsmeow 5f04eac6 ignores it).
 */
export function earlySuccess(conn: ClientConnection): void {
  conn.send(
    node('success', { t: unixSeconds(), props: '1', abprops: '1', location: 'sim', creation: unixSeconds() }),
  );
}
