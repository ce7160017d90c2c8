/**
 * Webhooks out, as Meta's webhooks do it
 * (https://developers.facebook.com/docs/graph-api/webhooks/getting-started):
 * - subscribing a callback URL performs the verification request: GET with `hub.mode=subscribe`,
 *   `hub.challenge` and `hub.verify_token`; the endpoint must answer 200 with the challenge;
 * - each event is a POST of JSON signed with `X-Hub-Signature-256` (signature.ts), delivered in
 *   order per app, and retried when the endpoint does not answer 2xx. Meta retries for days with
 *   decreasing frequency; the simulator retries `delaysMs.length` times after the first attempt,
 *   then records the event as failed and moves on (README).
 */
import { randomBytes } from 'node:crypto';
import { SIGNATURE_HEADER, signPayload } from './signature.js';

export interface WebhookRetry {
  /** Delay before each retry (its length is the number of retries). Default [100, 300, 900]. */
  delaysMs: number[];
  /** How long one attempt may take. Default 5 000 ms. */
  timeoutMs: number;
}
export const DEFAULT_RETRY: WebhookRetry = { delaysMs: [100, 300, 900], timeoutMs: 5_000 };

export interface Subscription {
  appId: string;
  callbackUrl: string;
  verifyToken: string;
}

/** One event and what became of it (for tests' assertions). */
export interface Delivery {
  appId: string;
  payload: unknown;
  body: string;
  signature: string;
  /** The HTTP status of each attempt, or 0 when it got none (refused, timed out). */
  attempts: number[];
  state: 'pending' | 'delivered' | 'failed' | 'unsubscribed';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class WebhookDispatcher {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly queues = new Map<string, Promise<void>>();
  readonly deliveries: Delivery[] = [];
  private closed = false;

  constructor(private readonly retry: WebhookRetry = DEFAULT_RETRY) {}

  /**
   * Verifies and saves `callbackUrl` for the app: resolves when the endpoint echoed the
   * challenge, throws (and saves nothing) otherwise.
   */
  async subscribe(input: { appId: string; callbackUrl: unknown; verifyToken: unknown }): Promise<void> {
    const { appId, callbackUrl, verifyToken } = input;
    if (typeof callbackUrl !== 'string' || typeof verifyToken !== 'string')
      throw new Error('callbackUrl and verifyToken are required');
    if (!URL.canParse(callbackUrl)) throw new Error('callbackUrl is not a URL');
    const url = new URL(callbackUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('callbackUrl must be http(s)');
    const sub: Subscription = { appId, callbackUrl, verifyToken };
    const challenge = String(randomBytes(6).readUIntBE(0, 6));
    url.searchParams.set('hub.mode', 'subscribe');
    url.searchParams.set('hub.challenge', challenge);
    url.searchParams.set('hub.verify_token', sub.verifyToken);
    let status = 0;
    let text = '';
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(this.retry.timeoutMs) });
      status = response.status;
      text = await response.text();
    } catch (err) {
      throw new Error(`callback verification failed: ${(err as Error).message}`);
    }
    if (status !== 200 || text.trim() !== challenge)
      throw new Error(`callback verification failed: the endpoint answered ${status} without the challenge`);
    this.subscriptions.set(sub.appId, sub);
  }

  subscription(appId: string): Subscription | undefined {
    return this.subscriptions.get(appId);
  }

  /** Queues `payload` for the app's callback, signed with `appSecret`; resolves when it is settled. */
  send(appId: string, appSecret: string, payload: unknown): Promise<Delivery> {
    const body = JSON.stringify(payload);
    const delivery: Delivery = {
      appId,
      payload,
      body,
      signature: signPayload(body, appSecret),
      attempts: [],
      state: 'pending',
    };
    this.deliveries.push(delivery);
    const previous = this.queues.get(appId) ?? Promise.resolve();
    const done = previous.then(() => this.deliver(delivery));
    this.queues.set(appId, done);
    return done.then(() => delivery);
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const sub = this.subscriptions.get(delivery.appId);
    if (!sub) {
      delivery.state = 'unsubscribed';
      return;
    }
    for (let attempt = 0; attempt <= this.retry.delaysMs.length; attempt++) {
      if (this.closed) break;
      if (attempt > 0) await sleep(this.retry.delaysMs[attempt - 1]!);
      let status = 0;
      try {
        const response = await fetch(sub.callbackUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: delivery.signature },
          body: delivery.body,
          signal: AbortSignal.timeout(this.retry.timeoutMs),
        });
        status = response.status;
        await response.arrayBuffer().catch(() => undefined);
      } catch {
        status = 0;
      }
      delivery.attempts.push(status);
      if (status >= 200 && status < 300) {
        delivery.state = 'delivered';
        return;
      }
    }
    delivery.state = 'failed';
  }

  /** Resolves when every queued event is settled. */
  async idle(): Promise<void> {
    await Promise.all([...this.queues.values()]);
  }

  close(): void {
    this.closed = true;
  }
}
