/**
 * First contacts in strict mode against today's pace (docs/benchmarks.md, "First contacts in
 * strict mode"): two devices of one sender, each paced at BENCH_FIRST_GAP_MS (100 ms, jitter 0;
 * 0: pacing off), send a list of BENCH_FIRST_LIST (1,000) new contacts at the same time, the
 * simulator in a process of its own:
 *
 * - the **baseline**, today's pace: an account whose device never had a history sync, so it holds
 *   no NCT salt and its first contacts carry no token, and the simulator does not ask for one;
 * - the **strict** run: an account whose device got the salt (its first history sync), with the
 *   simulator's strict first contacts on for it, so every first contact must carry a valid cstoken
 *   (HMAC-SHA256 of the salt over the contact's LID) or is refused with 463.
 *
 * Both go LID first (the contact's LID with `peer_recipient_pn`). Each device's pace is its paced
 * ideal ((list − 1) × gap) ÷ the time from its first stanza to its last, as the simulator received
 * them (GET /accounts/:phone/direct-messages); with pacing off, messages per second. The ratio
 * strict ÷ baseline is printed, with the 463s and the stanzas that carried a valid cstoken.
 * Run side by side, both see the same machine load. Nothing is asserted: the figures are printed.
 *
 * BENCH_FIRST_SALT says how the strict device gets its salt: `download` (default: a history chunk
 * on the media host), `inline` (a chunk inline in its notification), or `app-state` (only in the
 * app-state collection `regular_high`, set before the list without telling the device: the device
 * asks for it itself when its first contact would go without a token).
 */
import { deliverNctSalt, Stack, waitFor } from '@mgw/testing';
import { Fleet } from './support/fleet.js';

const LIST = Number(process.env.BENCH_FIRST_LIST ?? 1000);
const GAP_MS = Number(process.env.BENCH_FIRST_GAP_MS ?? 100);
const SALT = process.env.BENCH_FIRST_SALT ?? 'download';
if (!['download', 'inline', 'app-state'].includes(SALT))
  throw new Error('BENCH_FIRST_SALT must be download, inline or app-state');

interface Stanza {
  recipient?: string;
  token: string;
  cstokenValid?: boolean;
  to: string;
  peerRecipientPn?: string;
  error?: number;
  at: string;
}

const stack = await Stack.start({
  senders: 1,
  simulatorProcess: true,
  env: { SEND_MIN_GAP_MS: String(GAP_MS), SEND_GAP_JITTER_MS: '0', LOG_LEVEL: 'warn' },
});

try {
  const fleet = new Fleet(stack);
  await fleet.linkUpTo(2);
  const [baseline, strict] = fleet.linked;
  const phones = ['15557700000', '15557700001'];
  if (SALT === 'app-state') {
    await stack.simApi('POST', `/accounts/${phones[1]}/history-sync`, {
      conversations: [],
      withoutSalt: true,
    });
    await stack.simApi('POST', `/accounts/${phones[1]}/app-state/key-share`);
    await stack.simApi('POST', `/accounts/${phones[1]}/nct-salt`, { op: 'set', tell: false });
  } else await deliverNctSalt(stack, phones[1]!, strict!.deviceId, SALT as 'download' | 'inline');
  await stack.simApi('POST', '/reachout/strict', { on: true, phone: phones[1] });
  console.log(
    `${process.version}; one sender, 2 devices, a list of ${LIST} new contacts each, ${GAP_MS ? `paced at ${GAP_MS} ms` : 'pacing off'}; baseline ${baseline!.deviceId} (no salt, not strict), strict ${strict!.deviceId} (salt by ${SALT}, strict first contacts)`,
  );

  const lists = await fleet.sendLists(2, LIST, 'hello, first time', '1557');
  const stanzas = async (phone: string, i: number): Promise<Stanza[]> => {
    const prefix = `1557${String(i).padStart(4, '0')}`;
    const { messages } = await stack.simApi<{ messages: Stanza[] }>(
      'GET',
      `/accounts/${phone}/direct-messages`,
    );
    return messages.filter((m) => m.recipient?.startsWith(prefix));
  };
  await waitFor(
    async () => (await Promise.all(phones.map((p, i) => stanzas(p, i)))).every((s) => s.length >= LIST),
    {
      timeoutMs: Math.max(900_000, LIST * GAP_MS * 3),
      intervalMs: 2000,
      what: 'both lists at the simulator',
    },
  );
  const paceOf = (s: Stanza[]) => {
    const times = s.map((m) => Date.parse(m.at)).sort((a, b) => a - b);
    const seconds = (times[times.length - 1]! - times[0]!) / 1000;
    return { seconds, pace: GAP_MS ? ((s.length - 1) * GAP_MS) / 1000 / seconds : s.length / seconds };
  };
  const runs = await Promise.all(phones.map((p, i) => stanzas(p, i)));
  const [b, s] = runs.map(paceOf) as [ReturnType<typeof paceOf>, ReturnType<typeof paceOf>];
  const unit = GAP_MS ? '× the paced ideal' : 'msg/s';
  const describe = (name: string, st: Stanza[], p: ReturnType<typeof paceOf>) =>
    console.log(
      `  ${name}: ${st.length} stanzas in ${p.seconds.toFixed(1)} s, pace ${p.pace.toFixed(3)} ${unit}; 463: ${st.filter((m) => m.error === 463).length}, other errors: ${st.filter((m) => m.error && m.error !== 463).length}, cstoken valid: ${st.filter((m) => m.cstokenValid).length}, to a LID with peer_recipient_pn: ${st.filter((m) => m.to.endsWith('@lid') && m.peerRecipientPn).length}`,
    );
  describe('baseline (today)', runs[0]!, b);
  describe('strict          ', runs[1]!, s);
  console.log(`strict ÷ baseline pace: ${(s.pace / b.pace).toFixed(3)}`);
  console.log(`  (accepted ${lists.map((l) => l.messageIds.length).join(' + ')} messages)`);
} finally {
  await stack.stop();
}
