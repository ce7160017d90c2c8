import { useEffect, useRef, useState } from 'preact/hooks';
import { ADMIN_BASE, api } from './api';
import { WEBHOOK_EVENTS } from './events';

/**
 * The dashboard's live views: what a page shows is loaded once, then again whenever the event
 * stream (`GET /api/admin/v1/events/stream`, Server-Sent Events over the admin session) says it
 * changed — no polling. Every (re)connection of the stream reloads the page's data first, so an
 * event that happened while the stream was away is never missed; `EventSource` reconnects by
 * itself (3 s, with `Last-Event-ID` on a one-device stream), and a stream the server refused
 * (session gone, too many streams) is opened again after a growing pause.
 */

export type LiveState = 'connecting' | 'live' | 'reconnecting';

/** One event of the admin stream (the GET /events envelope with its device). */
export interface LiveEvent {
  deviceId: string;
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The stream of `device`'s events (every device's when absent). `onEvent` gets each event of the
 * wanted types; `onOpen` runs on every (re)connection, before the events that follow it.
 */
export function useEventStream(opts: {
  device?: string;
  types?: readonly string[];
  /** Not yet (the page does not know which device it shows): no stream. */
  off?: boolean;
  onEvent: (e: LiveEvent) => void;
  onOpen: () => void;
}): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const handlers = useRef(opts);
  handlers.current = opts;
  const types = opts.types?.join(',') ?? '';
  useEffect(() => {
    setState('connecting');
    if (opts.off) return;
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let pause = 1000;
    let stopped = false;
    const connect = () => {
      const params = new URLSearchParams();
      if (opts.device) params.set('device', opts.device);
      if (types) params.set('types', types);
      const es = new EventSource(`${ADMIN_BASE}/events/stream?${params.toString()}`, {
        withCredentials: true,
      });
      source = es;
      es.onopen = () => {
        pause = 1000;
        setState('live');
        handlers.current.onOpen();
      };
      // A lost connection, or the server's own `event: error` (a cut): either way it reconnects.
      es.onerror = () => {
        if (stopped) return;
        setState('reconnecting');
        // Refused (not 200) or ended for good: EventSource gives up; try again, and let a 401
        // from the session check sign the page out.
        if (es.readyState === EventSource.CLOSED) {
          es.close();
          void api('/session').catch(() => undefined);
          retry = setTimeout(connect, pause);
          pause = Math.min(pause * 2, 30_000);
        }
      };
      const deliver = (m: MessageEvent<string>) => {
        try {
          handlers.current.onEvent(JSON.parse(m.data) as LiveEvent);
        } catch {
          // Not an event of ours: ignored.
        }
      };
      for (const type of opts.types ?? WEBHOOK_EVENTS) es.addEventListener(type, deliver);
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(retry);
      source?.close();
    };
  }, [opts.device ?? '', types, !!opts.off]);
  return state;
}

/**
 * Data loaded by `load`, reloaded when the stream says it changed (`affects`), at most one load at
 * a time and at least `minGapMs` apart (a burst of events is one reload).
 */
export function useLiveData<T>(
  load: () => Promise<T>,
  o: {
    device?: string;
    types?: readonly string[];
    affects?: (e: LiveEvent) => boolean;
    minGapMs?: number;
    /** Reload anyway when nothing reloaded the data for this long: for what no event reports. */
    staleAfterMs?: number;
    /** No stream yet (see useEventStream). */
    off?: boolean;
  },
  deps: unknown[] = [],
) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const gen = useRef(0);
  const running = useRef(false);
  const queued = useRef(false);
  const last = useRef(0);
  const loader = useRef(load);
  loader.current = load;
  const stale = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(stale.current), []);

  const refresh = async (): Promise<void> => {
    if (running.current) {
      queued.current = true;
      return;
    }
    running.current = true;
    const mine = gen.current;
    try {
      const wait = last.current + (o.minGapMs ?? 300) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      last.current = Date.now();
      const value = await loader.current();
      if (mine !== gen.current) return;
      setData(value);
      setError(undefined);
    } catch (err) {
      if (mine === gen.current) setError((err as Error).message);
    } finally {
      running.current = false;
      if (mine === gen.current) {
        setLoading(false);
        clearTimeout(stale.current);
        if (o.staleAfterMs) stale.current = setTimeout(() => void refresh(), o.staleAfterMs);
      }
      if (queued.current) {
        queued.current = false;
        void refresh();
      }
    }
  };

  useEffect(() => {
    gen.current++;
    running.current = false;
    queued.current = false;
    setLoading(true);
    setData(undefined);
    last.current = 0;
    void refresh();
  }, deps);

  const live = useEventStream({
    ...(o.device ? { device: o.device } : {}),
    ...(o.types ? { types: o.types } : {}),
    ...(o.off ? { off: true } : {}),
    onOpen: () => void refresh(),
    onEvent: (e) => {
      if (!o.affects || o.affects(e)) void refresh();
    },
  });
  return { data, error, loading, refresh, live };
}

const LIVE_LABEL: Record<LiveState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
};

/** The stream's state, next to a page's title: live (green), connecting or reconnecting (amber). */
export function LiveIndicator(props: { state: LiveState }) {
  return (
    <span
      class={`live live-${props.state}`}
      data-testid="live-state"
      data-state={props.state}
      role="status"
      title={
        props.state === 'live'
          ? 'Updates arrive as they happen (event stream).'
          : 'The event stream is away: the page catches up when it is back.'
      }
    >
      <span class="dot" aria-hidden="true" />
      {LIVE_LABEL[props.state]}
    </span>
  );
}
