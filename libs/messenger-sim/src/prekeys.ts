import {
  encodeBigEndian,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  jidDecode,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { companionBundle } from './directory.js';
import type { PreKeyBundle } from './phone-signal.js';
import type { DirectoryContext } from './sim-context.js';
import { bytesOf, childrenNamed, firstChild, iqResult, node } from './stanza.js';

const KEY_BUNDLE_TYPE = Buffer.from([5]);

const readId = (n: BinaryNode | undefined): number =>
  [...(bytesOf(n) ?? [])].reduce((acc, b) => acc * 256 + b, 0);

/** The `encrypt` namespace: prekey count, prekey upload, key-bundle digest, bundle fetch, rotation. */
export function handleEncryptIq(sim: DirectoryContext, conn: ClientConnection, iq: BinaryNode): void {
  const child = firstChild(iq);
  const device = conn.device;
  if (iq.attrs.type === 'get' && child?.tag === 'count') {
    conn.send(iqResult(iq, [node('count', { value: String(device?.preKeys.size ?? 0) })]));
  } else if (iq.attrs.type === 'set' && getBinaryNodeChild(iq, 'list')) {
    if (device) {
      for (const key of getBinaryNodeChildren(getBinaryNodeChild(iq, 'list'), 'key')) {
        const value = bytesOf(getBinaryNodeChild(key, 'value'));
        if (value) device.preKeys.set(readId(getBinaryNodeChild(key, 'id')), value);
      }
      const skey = getBinaryNodeChild(iq, 'skey');
      const value = bytesOf(getBinaryNodeChild(skey, 'value'));
      const signature = bytesOf(getBinaryNodeChild(skey, 'signature'));
      if (value && signature)
        device.signedPreKey = { keyId: readId(getBinaryNodeChild(skey, 'id')), publicKey: value, signature };
    }
    conn.send(iqResult(iq));
  } else if (iq.attrs.type === 'set' && child?.tag === 'rotate') {
    const skey = getBinaryNodeChild(child, 'skey');
    const value = bytesOf(getBinaryNodeChild(skey, 'value'));
    const signature = bytesOf(getBinaryNodeChild(skey, 'signature'));
    if (device && value && signature)
      device.signedPreKey = { keyId: readId(getBinaryNodeChild(skey, 'id')), publicKey: value, signature };
    conn.send(iqResult(iq));
  } else if (iq.attrs.type === 'get' && child?.tag === 'digest') {
    conn.send(
      iqResult(iq, [
        node('digest', {}, [
          node('type', {}, KEY_BUNDLE_TYPE),
          node('registration', {}, encodeBigEndian(device?.registrationId ?? 0)),
          node(
            'list',
            {},
            [...(device?.preKeys.keys() ?? [])].map((id) => node('id', {}, encodeBigEndian(id, 3))),
          ),
        ]),
      ]),
    );
  } else if (iq.attrs.type === 'get' && child?.tag === 'key') {
    conn.send(
      iqResult(iq, [
        node(
          'list',
          {},
          childrenNamed(child, 'user').map((u) => bundleNode(sim, u.attrs.jid ?? '')),
        ),
      ]),
    );
  } else {
    conn.send(iqResult(iq));
  }
}

function bundleNode(sim: DirectoryContext, jid: string): BinaryNode {
  const decoded = jidDecode(jid);
  const user = decoded ? sim.directory.resolve(decoded.user, decoded.server) : undefined;
  const deviceId = decoded?.device ?? 0;
  let bundle: PreKeyBundle | undefined;
  if (user && deviceId === 0) bundle = user.signal.freshBundle();
  else if (user) {
    const companion = user.devices.get(deviceId);
    if (companion) bundle = companionBundle(companion);
  }
  if (!bundle) return node('user', { jid }, [node('error', { code: '404', text: 'item-not-found' })]);
  const content: BinaryNode[] = [
    node('registration', {}, encodeBigEndian(bundle.registrationId)),
    node('type', {}, KEY_BUNDLE_TYPE),
    node('identity', {}, bundle.identityKey),
    node('skey', {}, [
      node('id', {}, encodeBigEndian(bundle.signedPreKey.keyId, 3)),
      node('value', {}, bundle.signedPreKey.publicKey),
      node('signature', {}, bundle.signedPreKey.signature),
    ]),
  ];
  if (bundle.preKey) {
    content.push(
      node('key', {}, [
        node('id', {}, encodeBigEndian(bundle.preKey.keyId, 3)),
        node('value', {}, bundle.preKey.publicKey),
      ]),
    );
  }
  return node('user', { jid }, content);
}
