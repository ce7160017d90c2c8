/** One usync contact query of an account: when it arrived and how many numbers it asked about. */
export interface ContactLookupQuery {
  at: string;
  numbers: number;
}

export interface ContactLookupsView {
  /** Numbers the account's devices looked up (a number asked twice counts twice). */
  count: number;
  /** The queries, oldest first (the last `MAX_QUERIES`). */
  queries: ContactLookupQuery[];
}

const MAX_QUERIES = 1000;

/**
 * The contact lookups (usync with the contact protocol: "is this number on WhatsApp?") each
 * account made, so a test can prove a gateway answers from its cache (the count does not move)
 * and paces its lookups (the queries' times).
 */
export class ContactLookups {
  private readonly byAccount = new Map<string, ContactLookupsView>();

  record(account: string, numbers: number): void {
    if (numbers === 0) return;
    let view = this.byAccount.get(account);
    if (!view) this.byAccount.set(account, (view = { count: 0, queries: [] }));
    view.count += numbers;
    view.queries.push({ at: new Date().toISOString(), numbers });
    if (view.queries.length > MAX_QUERIES) view.queries.shift();
  }

  view(account: string): ContactLookupsView {
    const view = this.byAccount.get(account);
    return { count: view?.count ?? 0, queries: [...(view?.queries ?? [])] };
  }

  clear(account: string): void {
    this.byAccount.delete(account);
  }
}
