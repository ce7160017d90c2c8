/**
 * The customer service window: a business may send free-form messages to a user for 24 hours
 * after the user's last message; outside it only templates go (131047 otherwise).
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/send-messages#customer-service-windows
 */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

/** The last inbound message of each (business number, user) pair, and whether a window is open. */
export class CustomerWindows {
  private readonly lastInbound = new Map<string, number>();

  constructor(private readonly windowMs = WINDOW_MS) {}

  private key(phoneNumberId: string, waId: string): string {
    return `${phoneNumberId}:${waId}`;
  }

  /** The user wrote at `at` (ms): the window opens, or restarts, from then. */
  inbound(phoneNumberId: string, waId: string, at: number): void {
    const key = this.key(phoneNumberId, waId);
    this.lastInbound.set(key, Math.max(at, this.lastInbound.get(key) ?? 0));
  }

  /** Whether the window is open at `now`: a last inbound message less than 24 h before it. */
  isOpen(phoneNumberId: string, waId: string, now: number): boolean {
    const last = this.lastInbound.get(this.key(phoneNumberId, waId));
    return last !== undefined && now - last < this.windowMs;
  }

  /** When the window closes (ms), or undefined when none was ever opened. */
  expiresAt(phoneNumberId: string, waId: string): number | undefined {
    const last = this.lastInbound.get(this.key(phoneNumberId, waId));
    return last === undefined ? undefined : last + this.windowMs;
  }
}
