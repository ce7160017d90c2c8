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

/**
 * Subscribes the sandbox's app to `callbackUrl` as soon as the handshake passes — that is, once a
 * device of the gateway holds SANDBOX_VERIFY_TOKEN — asking again every `everyMs` until then.
 * Answers a stop for the retries.
 */
export function subscribeWhenReady(
  sim: { subscribe(appId: string, callbackUrl: string, verifyToken: string): Promise<void> },
  callbackUrl: string,
  onSubscribed: () => void = () => undefined,
  everyMs = 3000,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = async (): Promise<void> => {
    try {
      await sim.subscribe(SANDBOX_APP_ID, callbackUrl, SANDBOX_VERIFY_TOKEN);
      onSubscribed();
    } catch {
      if (!stopped) timer = setTimeout(() => void attempt(), everyMs);
    }
  };
  void attempt();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
