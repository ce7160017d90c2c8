import { connect, type Socket } from 'node:net';

/**
 * Redis MONITOR on a socket of its own, parsed line by line. ioredis' `monitor()` switches to
 * monitoring mode one microtask after MONITOR's `+OK`; a busy server that sends the first
 * monitored command in the same TCP read makes ioredis throw "Command queue state error" — a
 * test flake on loaded machines. Here every `+` line after the `+OK` is a monitored command.
 */
export class RedisMonitor {
  private buffered = '';
  private subscribed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly onCommand: (args: string[], byScript: boolean) => void,
  ) {}

  /**
   * Connects to `url` (redis://host:port, no auth) and calls `onCommand` with each command's
   * arguments, and whether a script ran it (`[0 lua]`) rather than a client sending it.
   */
  static async start(
    url: string,
    onCommand: (args: string[], byScript: boolean) => void,
  ): Promise<RedisMonitor> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    const monitor = new RedisMonitor(socket, onCommand);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        monitor.buffered += chunk;
        let end: number;
        while ((end = monitor.buffered.indexOf('\r\n')) >= 0) {
          const line = monitor.buffered.slice(0, end);
          monitor.buffered = monitor.buffered.slice(end + 2);
          if (!monitor.subscribed) {
            if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
            monitor.subscribed = true;
            resolve();
          } else if (line.startsWith('+'))
            monitor.onCommand(parseMonitorLine(line), / \[\d+ lua\] /.test(line));
        }
      });
      socket.write('MONITOR\r\n');
    });
    return monitor;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** `+1700000000.123 [0 127.0.0.1:1234] "XADD" "k" "a\"b"` → the quoted arguments, unescaped. */
export function parseMonitorLine(line: string): string[] {
  const args: string[] = [];
  const quoted = /"((?:[^"\\]|\\.)*)"/g;
  for (let m = quoted.exec(line); m; m = quoted.exec(line)) {
    args.push(
      m[1]!.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, e: string) =>
        e.length === 3
          ? String.fromCharCode(parseInt(e.slice(1), 16))
          : e === 'n'
            ? '\n'
            : e === 'r'
              ? '\r'
              : e === 't'
                ? '\t'
                : e,
      ),
    );
  }
  return args;
}
