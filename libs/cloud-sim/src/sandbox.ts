/**
 * The sandbox's business number (`MESSENGER_SANDBOX=1 npm start`, cli.ts; the test kit's stacks
 * with `cloud: true`): credentials of the simulator's own, printed and documented
 * (docs/cloud-api.md#the-sandbox); no real account has them.
 */
import type { PhoneNumberConfig } from './config.js';

export const SANDBOX_NUMBER: Readonly<PhoneNumberConfig> = {
  id: '100000000000001',
  wabaId: '200000000000001',
  displayPhoneNumber: '+1 555-010-0001',
  verifiedName: 'Sandbox Shop',
  accessToken: 'sandbox-access-token',
  appSecret: 'sandbox-app-secret',
};

/** The verify token the sandbox's app subscribes with (a device must hold it for the handshake). */
export const SANDBOX_VERIFY_TOKEN = 'sandbox-verify-token';

/** The sandbox's app: its numbers' webhooks go to the callback it subscribed. */
export const SANDBOX_APP_ID = `app-${SANDBOX_NUMBER.wabaId}`;
