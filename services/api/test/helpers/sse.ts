/** A Server-Sent Events client for the stream tests: fetch and a small parser. */

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** An open stream read with fetch and a small SSE parser (fields `id`, `event`, `data`; comments kept apart). */
export interface Sse {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  /** Resolves once `n` events (of the given type, or any) arrived; rejects after `ms`. */
  waitFor(n: number, type?: string, ms?: number): Promise<SseEvent[]>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<Sse> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let waiters: (() => void)[] = [];
  let endedResolve!: () => void;
  const ended = new Promise<void>((resolve) => (endedResolve = resolve));
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    let current: SseEvent = { data: '' };
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (current.data !== '' || current.event) events.push(current);
            current = { data: '' };
            waiters.forEach((w) => w());
          } else if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else {
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
            else if (field === 'data') current.data += value;
          }
        }
      }
    } catch {
      // Aborted by close().
    }
    endedResolve();
    waiters.forEach((w) => w());
  })();
  const matching = (type?: string) => events.filter((e) => !type || e.event === type);
  return {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    ended,
    close: () => abort.abort(),
    waitFor: (n, type, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (matching(type).length >= n) {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== check);
            resolve(matching(type));
          }
        };
        const timer = setTimeout(
          () => reject(new Error(`${matching(type).length} of ${n} ${type ?? 'events'} after ${ms} ms`)),
          ms,
        );
        waiters.push(check);
        check();
      }),
  };
}
