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

/** Evaluates `expression` on the process's main thread; resolves with its value once it ran. */
export async function evaluateInProcess(url: string, expression: string): Promise<unknown> {
  const ws = new WebSocket(url);
  try {
    await once(ws, 'open');
    const answer = new Promise<unknown>((resolve, reject) => {
      ws.on('message', (data: Buffer) => {
        const msg = JSON.parse(data.toString()) as {
          id?: number;
          result?: { result?: { value?: unknown }; exceptionDetails?: { text: string } };
        };
        if (msg.id !== 1) return;
        if (msg.result?.exceptionDetails) reject(new Error(msg.result.exceptionDetails.text));
        else resolve(msg.result?.result?.value);
      });
      ws.once('close', () => reject(new Error('inspector closed before answering')));
    });
    ws.send(
      JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression, returnByValue: true } }),
    );
    return await answer;
  } finally {
    ws.close();
  }
}

/** Keeps the process's event loop busy (a synchronous loop on its main thread) for `ms`. */
export function busyLoop(url: string, ms: number): Promise<unknown> {
  return evaluateInProcess(url, `(() => { const end = Date.now() + ${ms}; while (Date.now() < end); })()`);
}
