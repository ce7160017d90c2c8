import { once } from 'node:events';
import WebSocket from 'ws';

/**
 * Runs code in another Node process through its inspector, for a fault only that process's own
 * code can make (e.g. a busy event loop): start it with `NODE_OPTIONS=--inspect=127.0.0.1:0` (a
 * free port each) and pass what it printed.
 */
export function inspectorUrl(output: readonly string[]): string | undefined {
  for (const chunk of output) {
    const m = /Debugger listening on (ws:\/\/\S+)/.exec(chunk);
    if (m) return m[1];
  }
  return undefined;
}

/** A session with a process's inspector: protocol calls by method, each answered by its id. */
export interface InspectorSession {
  call<T>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

/** Opens a session with the inspector at `url` (what `inspectorUrl` found). */
export async function openInspector(url: string): Promise<InspectorSession> {
  // A CPU profile of a busy process can be large.
  const ws = new WebSocket(url, { maxPayload: 1 << 30 });
  await once(ws, 'open');
  let next = 0;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  ws.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
    const w = msg.id === undefined ? undefined : waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id!);
    if (msg.error) w.reject(new Error(msg.error.message));
    else w.resolve(msg.result);
  });
  ws.once('close', () => {
    for (const w of waiting.values()) w.reject(new Error('inspector closed before answering'));
  });
  return {
    call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
      const id = ++next;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise<T>((resolve, reject) => waiting.set(id, { resolve: resolve as never, reject }));
    },
    close: () => ws.close(),
  };
}

/** Evaluates `expression` on the process's main thread; resolves with its value once it ran. */
export async function evaluateInProcess(url: string, expression: string): Promise<unknown> {
  const session = await openInspector(url);
  try {
    const answer = await session.call<{ result?: { value?: unknown }; exceptionDetails?: { text: string } }>(
      'Runtime.evaluate',
      { expression, returnByValue: true },
    );
    if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.text);
    return answer.result?.value;
  } finally {
    session.close();
  }
}

/** Keeps the process's event loop busy (a synchronous loop on its main thread) for `ms`. */
export function busyLoop(url: string, ms: number): Promise<unknown> {
  return evaluateInProcess(url, `(() => { const end = Date.now() + ${ms}; while (Date.now() < end); })()`);
}
