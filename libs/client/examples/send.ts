/**
 * Sends a text with the typed client, prints POST /send's answer, waits until each message is
 * sent (or failed: then with the reason) and prints its status.
 *
 *   TOKEN=… TO=15550000002,15550000003 TEXT='Hello' \
 *     node --conditions=development --import tsx libs/client/examples/send.ts
 *
 * The gateway is `GW_URL` when set, else http://127.0.0.1:$PORT (3000 without PORT), as
 * `npm start` listens. `TO` is a number or numbers separated by commas; `LIST=1` sends a single
 * number as a list of one. (`npm start` brings a gateway up; `npm run -s token -- create --name
 * example` makes a token.)
 */
import { createGatewayClient, type MessageAnswer } from '@mgw/client';

const baseUrl = process.env.GW_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const token = process.env.TOKEN;
const to = (process.env.TO ?? '').split(',').filter(Boolean);
if (!token || to.length === 0) {
  console.error('set TOKEN (an API token) and TO (a number, or numbers separated by commas)');
  process.exit(2);
}
const asList = to.length > 1 || process.env.LIST === '1';
const gateway = createGatewayClient({ baseUrl, token });
const print = (line: string) => process.stdout.write(`${line}\n`);

const status = await gateway.status();
if (!status.ok) throw new Error(`status: ${status.status} ${status.error.error}`);
print(`device: ${status.data.status}${status.data.phone ? ` (${status.data.phone})` : ''}`);

const sent = await gateway.send({ to: asList ? to : to[0]!, text: process.env.TEXT ?? 'Hello' });
if (!sent.ok) {
  // Every refusal is `{ success: false, error, details? }`, typed.
  console.error(`refused (${sent.status}): ${sent.error.error}`, sent.error.details ?? '');
  process.exit(1);
}
// One number (`to: '1555…'`): `{ success, messageId }`, the message's id.
// A list (`to: [...]`, even of one number): `messageId` is the list's batch id (GET /batches/{id})
// and `messageIds` one message id per recipient, in `to` order.
const { messageId, messageIds } = sent.data;
const messages: [id: string, to: string][] = messageIds
  ? messageIds.map((id, i) => [id, to[i]!])
  : [[messageId, to[0]!]];
if (messageIds) {
  print(`list: ${messageId} (batch id), ${messageIds.length} message(s)`);
  for (const [id, phone] of messages) print(`  ${phone}: ${id}`);
} else print(`message: ${messageId}`);

/** The message's record once it left `queued`/`scheduled`, or its last read after ~30 s. */
async function settled(id: string): Promise<MessageAnswer['data'] | string> {
  let last: MessageAnswer['data'] | string = 'not read yet';
  for (let i = 0; i < 60; i++) {
    const read = await gateway.getMessage(id);
    if (!read.ok) last = `${read.status} ${read.error.error}`;
    else {
      last = read.data.data;
      if (last.status !== 'queued' && last.status !== 'scheduled') return last;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return last;
}

let failed = 0;
for (const [id, phone] of messages) {
  const record = await settled(id);
  if (typeof record === 'string') {
    print(`${id} (${phone}): unreadable: ${record}`);
    failed++;
  } else if (record.status === 'failed') {
    // The record says why: `error` (e.g. not_on_whatsapp, logged_out), `failedAt` when.
    print(`${id} (${phone}): failed: ${record.error ?? 'no reason recorded'}`);
    failed++;
  } else print(`${id} (${phone}): ${record.status}`);
}
if (failed > 0) process.exitCode = 1;
