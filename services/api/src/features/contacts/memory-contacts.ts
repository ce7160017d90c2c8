import type { ContactAnswer, ContactCache, ContactLookupCap, LookupAllowance } from '@mgw/store';

/**
 * TEST SUPPORT, not used by the API: a device's contact cache and its daily lookup cap in memory,
 * for the fast tests of the use cases that look contacts up (the number check, usernames, the
 * account's requests that reach a contact). They read and count as libs/store's ContactCache and
 * ContactLookupCap do; what they keep is this process's alone.
 */

/** The numbers a device looked up, and what WhatsApp answered (`putMany`, as the holder writes them). */
export class MemoryContactCache implements Pick<ContactCache, 'getMany' | 'putMany'> {
  private readonly answers = new Map<string, ContactAnswer>();

  async getMany(deviceId: string, phones: readonly string[]): Promise<Map<string, ContactAnswer>> {
    const found = new Map<string, ContactAnswer>();
    for (const phone of new Set(phones)) {
      const answer = this.answers.get(`${deviceId}\n${phone}`);
      if (answer) found.set(phone, { ...answer });
    }
    return found;
  }

  async putMany(deviceId: string, answers: ReadonlyMap<string, ContactAnswer>): Promise<void> {
    for (const [phone, answer] of answers) this.answers.set(`${deviceId}\n${phone}`, { ...answer });
  }
}

/**
 * The daily lookup cap of each device (`perDay`; 0: none): a take of several is all or none, and
 * a refused one says when the day's window ends (`resetInSeconds`).
 */
export class MemoryLookupCap implements Pick<ContactLookupCap, 'take'> {
  private readonly used = new Map<string, number>();

  constructor(
    private readonly perDay: number,
    readonly resetInSeconds = 3600,
  ) {}

  async take(deviceId: string, count: number): Promise<LookupAllowance> {
    if (count <= 0 || this.perDay === 0) return { granted: true };
    const used = this.used.get(deviceId) ?? 0;
    if (used + count > this.perDay) return { granted: false, resetInSeconds: this.resetInSeconds };
    this.used.set(deviceId, used + count);
    return { granted: true };
  }
}
