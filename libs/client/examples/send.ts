/**
 * Sends a text with the typed client, waits until it is sent, and prints its record.
 *
 *   GW_URL=http://127.0.0.1:3000 TOKEN=… TO=15550000002 TEXT='Hello' \
 *     node --conditions=development --import tsx libs/client/examples/send.ts
 *
 * (`npm start` brings a gateway up; `npm run -s token -- create --name example` makes a token.)
 */
import { createGatewayClient } from '@mgw/client';

const baseUrl = process.env.GW_URL ?? 'http://127.0.0.1:3000';
const token = process.env.TOKEN;
const to = (process.env.TO ?? '').split(',').filter(Boolean);
if (!token || to.length === 0) {
  console.error('set TOKEN (an API token) and TO (a number, or numbers separated by commas)');
  process.exit(2);
}
const gateway = createGatewayClient({ baseUrl, token });
const print = (line: string) => process.stdout.write(`${line}\n`);

const status = await gateway.status();
if (!status.ok) throw new Error(`status: ${status.status} ${status.error.error}`);
print(`device: ${status.data.status}${status.data.phone ? ` (${status.data.phone})` : ''}`);

const sent = await gateway.send({ to: to.length === 1 ? to[0]! : to, text: process.env.TEXT ?? 'Hello' });
if (!sent.ok) {
  // Every refusal is `{ success: false, error, details? }`, typed.
  console.error(`refused (${sent.status}): ${sent.error.error}`, sent.error.details ?? '');
  process.exit(1);
}
const ids = sent.data.messageIds ?? [sent.data.messageId];
for (const id of ids) {
  for (let i = 0; i < 60; i++) {
    const read = await gateway.getMessage(id);
    if (read.ok && read.data.data.status !== 'queued' && read.data.data.status !== 'scheduled') {
      print(`${id}: ${read.data.data.status}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
