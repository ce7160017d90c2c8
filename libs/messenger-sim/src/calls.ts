import { jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { normalizePhone, type SimUser } from './directory.js';
import { chatJidOf, lidAddressed } from './lid-chats.js';
import { SimError } from './sim-error.js';
import type { SimLogger } from './logger.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { childrenNamed, firstChild, newStanzaId, node, unixSeconds } from './stanza.js';

/**
 * Voice and video calls from simulated contacts to an account: the server offers the call to
 * every linked device of the account (`<call><offer call-id call-creator>` with `<audio>`, and
 * `<video>` for a video call; a group call says `type="group"` and `group-jid`), the caller may
 * hang up (`terminate`, or with `reason="timeout"` nobody answered), the account's phone may
 * answer it (`accept`). A device rejects it with `<call><reject call-id call-creator/></call>`,
 * which the server acknowledges (Baileys' `rejectCall` waits for that answer) and which ends the
 * call for the caller. A reject that carries the caller's privacy token (`<reject><tctoken>`, as
 * whatsmeow 00ce57f2 sent it) is acknowledged but leaves the call ringing, counted in
 * `rejectsWithTctoken`: whatsmeow issue #1182 reports that WhatsApp ignores such a reject, and
 * whatsmeow 592721a0 ("call: remove tctoken in reject requests") took the token out again.
 * Media, relays and the call's transport are not simulated.
 */

/** What the calls need of the simulator. */
export interface CallsContext extends DirectoryContext, DeliveryContext {
  readonly logger: SimLogger;
}

export type CallState = 'ringing' | 'accepted' | 'rejected' | 'ended' | 'missed';

export interface SimCall {
  id: string;
  from: string;
  to: string;
  video: boolean;
  groupId?: string;
  state: CallState;
  offeredAt: string;
  acceptedAt?: string;
  /** When a linked device rejected it, and which (the account's device id). */
  rejectedAt?: string;
  rejectedBy?: number;
  /** Milliseconds from the offer to the device's reject. */
  rejectedAfterMs?: number;
  endedAt?: string;
  /** Rejects that carried `<tctoken>` and were ignored (the call kept ringing; whatsmeow 592721a0). */
  rejectsWithTctoken?: number;
}

export interface CallInput {
  from: string;
  to: string;
  video?: boolean;
  /** A group call: the group it is in (`<digits>@g.us`). */
  groupId?: string;
}

/** Calls kept per simulator (the oldest are forgotten past it). */
const MAX_CALLS = 1000;
const callsBySim = new WeakMap<CallsContext, Map<string, SimCall & { offeredMs: number }>>();

function callsOf(sim: CallsContext): Map<string, SimCall & { offeredMs: number }> {
  let calls = callsBySim.get(sim);
  if (!calls) callsBySim.set(sim, (calls = new Map()));
  return calls;
}

const view = ({ offeredMs: _offeredMs, ...call }: SimCall & { offeredMs: number }): SimCall => ({ ...call });

function requireCall(sim: CallsContext, id: string): SimCall & { offeredMs: number } {
  const call = callsOf(sim).get(id);
  if (!call) throw new SimError(`unknown call ${id}`, 404);
  return call;
}

/** The `<call>` stanza the server sends the account's devices about `call` from `caller`. */
function callStanza(caller: SimUser, child: BinaryNode): BinaryNode {
  return node('call', { from: chatJidOf(caller), id: newStanzaId(), t: unixSeconds() }, [child]);
}

function creatorAttrs(call: SimCall, caller: SimUser): Record<string, string> {
  return {
    'call-id': call.id,
    'call-creator': chatJidOf(caller),
    // a LID-addressed caller's number, unless it hides it
    ...(lidAddressed(caller) && !caller.hidePhone
      ? { caller_pn: jidEncode(caller.phone, 's.whatsapp.net') }
      : {}),
  };
}

function toDevices(sim: CallsContext, account: SimUser, stanza: () => BinaryNode): void {
  for (const device of account.devices.values()) sim.deliverToDevice(device, stanza());
}

/** A contact calls an account: every linked device is offered the call. */
export function startCall(sim: CallsContext, input: CallInput): SimCall {
  const caller = sim.directory.lookupOrCreate(input.from);
  if (!caller) throw new SimError(`${input.from} is not on WhatsApp`, 404);
  const account = sim.directory.get(input.to);
  if (!account) throw new SimError(`unknown phone ${input.to}`, 404);
  if (account.devices.size === 0) throw new SimError(`${input.to} has no linked device`, 409);
  if (input.groupId !== undefined && !/^\d{5,24}(-\d{5,12})?@g\.us$/.test(input.groupId))
    throw new SimError('groupId must be a group id (<digits>@g.us)', 400);
  const now = Date.now();
  const call = {
    id: newStanzaId() + newStanzaId().slice(0, 8),
    from: caller.phone,
    to: account.phone,
    video: !!input.video,
    ...(input.groupId ? { groupId: input.groupId } : {}),
    state: 'ringing' as CallState,
    offeredAt: new Date(now).toISOString(),
    offeredMs: now,
  };
  const calls = callsOf(sim);
  calls.set(call.id, call);
  if (calls.size > MAX_CALLS) calls.delete(calls.keys().next().value!);
  toDevices(sim, account, () =>
    callStanza(
      caller,
      node(
        'offer',
        {
          ...creatorAttrs(call, caller),
          ...(call.groupId ? { type: 'group', 'group-jid': call.groupId } : {}),
        },
        [
          node('audio', { enc: 'opus', rate: '16000' }),
          ...(call.video ? [node('video', { enc: 'vp8', dec: 'vp8' })] : []),
        ],
      ),
    ),
  );
  return view(call);
}

/** The caller hangs up (`reason: 'timeout'`: nobody answered in time), or the answered call ends. */
export function terminateCall(sim: CallsContext, id: string, reason?: string): SimCall {
  const call = requireCall(sim, id);
  if (reason !== undefined && reason !== 'timeout')
    throw new SimError('reason must be timeout, or absent', 400);
  if (call.state === 'ended' || call.state === 'missed' || call.state === 'rejected')
    throw new SimError(`call ${id} already ${call.state}`, 409);
  const caller = sim.directory.get(call.from)!;
  const account = sim.directory.get(call.to)!;
  call.state = call.state === 'accepted' ? 'ended' : 'missed';
  call.endedAt = new Date().toISOString();
  toDevices(sim, account, () =>
    callStanza(caller, node('terminate', { ...creatorAttrs(call, caller), ...(reason ? { reason } : {}) })),
  );
  return view(call);
}

/** The account's phone answers the call: its linked devices are told (`accept`). */
export function acceptCall(sim: CallsContext, id: string): SimCall {
  const call = requireCall(sim, id);
  if (call.state !== 'ringing') throw new SimError(`call ${id} is ${call.state}, not ringing`, 409);
  const caller = sim.directory.get(call.from)!;
  const account = sim.directory.get(call.to)!;
  call.state = 'accepted';
  call.acceptedAt = new Date().toISOString();
  toDevices(sim, account, () => callStanza(caller, node('accept', creatorAttrs(call, caller))));
  return view(call);
}

export function callView(sim: CallsContext, id: string): SimCall {
  return view(requireCall(sim, id));
}

/**
 * A `<call>` stanza from a linked device: a `reject` ends a ringing call (the caller sees it
 * rejected); every such stanza is acknowledged with an `<ack class="call">` of its id, which
 * Baileys' rejectCall waits for.
 */
export function handleClientCall(sim: CallsContext, conn: ClientConnection, stanza: BinaryNode): void {
  const child = firstChild(stanza);
  const id = stanza.attrs.id;
  if (id) conn.send(node('ack', { id, class: 'call', type: child?.tag ?? '', from: stanza.attrs.to ?? '' }));
  if (child?.tag !== 'reject') return;
  const call = callsOf(sim).get(child.attrs['call-id'] ?? '');
  if (!call || call.state !== 'ringing' || conn.account?.phone !== call.to) return;
  if (childrenNamed(child, 'tctoken').length) {
    call.rejectsWithTctoken = (call.rejectsWithTctoken ?? 0) + 1;
    sim.logger.info({ call: call.id }, 'call reject with a tctoken ignored: the call keeps ringing');
    return;
  }
  const now = Date.now();
  call.state = 'rejected';
  call.rejectedAt = new Date(now).toISOString();
  call.rejectedAfterMs = now - call.offeredMs;
  call.rejectedBy = conn.device?.id;
  sim.logger.info({ call: call.id, ms: call.rejectedAfterMs }, 'call rejected by a linked device');
}

/** The control API's call routes. */
export function callRoutes(
  sim: CallsContext,
): Array<[string, RegExp, (body: Record<string, unknown>, params: string[]) => unknown]> {
  const phone = (b: Record<string, unknown>, key: string): string => {
    const v = b[key];
    if ((typeof v !== 'string' && typeof v !== 'number') || !normalizePhone(String(v)))
      throw new SimError(`${key} must be a phone number`, 400);
    return normalizePhone(String(v));
  };
  return [
    [
      'POST',
      /^\/calls$/,
      (b) => {
        if (b.video !== undefined && typeof b.video !== 'boolean')
          throw new SimError('video must be a boolean', 400);
        if (b.groupId !== undefined && typeof b.groupId !== 'string')
          throw new SimError('groupId must be a string', 400);
        return startCall(sim, {
          from: phone(b, 'from'),
          to: phone(b, 'to'),
          video: b.video === true,
          ...(typeof b.groupId === 'string' ? { groupId: b.groupId } : {}),
        });
      },
    ],
    ['GET', /^\/calls\/([^/]+)$/, (_b, [id]) => callView(sim, id!)],
    [
      'POST',
      /^\/calls\/([^/]+)\/terminate$/,
      (b, [id]) => terminateCall(sim, id!, typeof b.reason === 'string' ? b.reason : undefined),
    ],
    ['POST', /^\/calls\/([^/]+)\/accept$/, (_b, [id]) => acceptCall(sim, id!)],
  ];
}
