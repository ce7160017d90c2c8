/**
 * Many SSE readers of one stream in a process of their own (the event-streams bench's readers):
 * their cost lands on this process, not on the bench's, where the simulator runs. Each reader only
 * counts the frames it gets (a frame starts with `id: ` after a blank line; a chunk's edge is
 * carried over). Driven by lines on stdin, answered by one line on stdout:
 *
 * - `open <count> <last-event-id>`: opens `count` streams resuming after that id → `opened`
 * - `counts` → the readers' counts as JSON, and whether any stream ended
 * - `close` → closes them all → `closed`
 *
 * argv: the stream's URL and the API token.
 */
import http from 'node:http';
import readline from 'node:readline';

const [url, token] = process.argv.slice(2) as [string, string];

class CountingReader {
  events = 0;
  ended = false;
  private carry = '';
  private req?: http.ClientRequest;

  open(lastEventId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const headers = { authorization: `Bearer ${token}`, 'last-event-id': lastEventId };
      this.req = http.get(url, { headers, agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
        resolve();
        res.on('data', (chunk: Buffer) => this.count(chunk));
        res.on('end', () => (this.ended = true));
        res.on('error', () => (this.ended = true));
      });
      this.req.on('error', (err) => (this.ended ? undefined : reject(err)));
    });
  }

  private count(chunk: Buffer): void {
    const text = this.carry + chunk.toString('latin1');
    let i = text.indexOf('\n\nid: ');
    while (i >= 0) {
      this.events++;
      i = text.indexOf('\n\nid: ', i + 6);
    }
    this.carry = text.slice(-5);
  }

  close(): void {
    this.ended = true;
    this.req?.destroy();
  }
}

let readers: CountingReader[] = [];
const answer = (line: string) => process.stdout.write(`${line}\n`);
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [command, ...args] = line.trim().split(' ');
  if (command === 'open') {
    const [count, lastEventId] = [Number(args[0]), args[1]!];
    readers = Array.from({ length: count }, () => new CountingReader());
    // A few at a time: the API's accept queue is not the thing measured.
    for (let i = 0; i < readers.length; i += 20)
      await Promise.all(readers.slice(i, i + 20).map((r) => r.open(lastEventId)));
    answer('opened');
  } else if (command === 'counts') {
    answer(JSON.stringify({ counts: readers.map((r) => r.events), ended: readers.some((r) => r.ended) }));
  } else if (command === 'close') {
    readers.forEach((r) => r.close());
    readers = [];
    answer('closed');
  }
}
