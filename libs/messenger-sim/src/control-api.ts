import type { IncomingMessage, ServerResponse } from 'node:http';
import { normalizePhone, type ContactInput } from './directory.js';
import type { UndecryptableFault } from './faults.js';
import { accountRoutes } from './account-api.js';
import { companionRoutes } from './companions.js';
import { appStateRoutes } from './app-state-api.js';
import { historyRoutes } from './history-api.js';
import { usernameInputOf, usernameRoutes, withUsername } from './usernames.js';
import { firstContactRoutes } from './first-contacts.js';
import { groupRoutes } from './groups-api.js';
import { statusRoutes } from './status-api.js';
import { newsletterRoutes } from './newsletter-api.js';
import { callRoutes } from './calls.js';
import { groupPrivacyRoutes } from './group-privacy.js';
import { readReceiptRoutes } from './read-receipts.js';
import type { PasskeyLinkView } from './passkey.js';
import { passkeyRoutes } from './passkey-api.js';
import type { InboundAttachment } from './inbound-content.js';
import { SimError, type Simulator } from './simulator.js';
import type { InboundKindInput } from './message-kinds.js';
import type { SecretOrigSender } from './secret-edits.js';

export interface SimulatorInfo {
  wsUrl: string;
  rootPublicKey: string;
  mediaCaPem: string;
  /**
   * The media host's origin: where a sandbox-mode client fetches every media file and history
   * chunk (absent with `publishMediaUrl: false`).
   */
  mediaUrl?: string;
}

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const MAX_BODY = 10 * 1024 * 1024;

const readBody = (req: IncomingMessage): Promise<Body> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) reject(new SimError('body too large', 413));
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8').trim();
      if (!raw) return resolve({});
      try {
        const parsed: unknown = JSON.parse(raw);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
          reject(new SimError('body must be a JSON object', 400));
        else resolve(parsed as Body);
      } catch {
        reject(new SimError('body is not valid JSON', 400));
      }
    });
    req.on('error', reject);
  });

const str = (body: Body, key: string, required = true): string | undefined => {
  const value = body[key];
  if (value === undefined || value === null || value === '') {
    if (required) throw new SimError(`${key} is required`, 400);
    return undefined;
  }
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new SimError(`${key} must be a string`, 400);
  return String(value);
};

const num = (body: Body, key: string): number | undefined => {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new SimError(`${key} must be a number`, 400);
  return value;
};

const bool = (body: Body, key: string): boolean | undefined => {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new SimError(`${key} must be true or false`, 400);
  return value;
};

/** The HTTP control surface: JSON in, JSON out, `{ error }` with a 4xx for anything the caller got wrong. */
export function createControlApi(sim: Simulator, info: () => SimulatorInfo) {
  const routes: Array<[string, RegExp, Handler]> = [
    ['GET', /^\/health$/, () => ({ ok: true })],
    ['GET', /^\/info$/, () => info()],
    [
      'POST',
      /^\/phone\/link$/,
      (b) => {
        const phone = str(b, 'phone')!;
        const name = str(b, 'name', false);
        const pictureUrl = str(b, 'pictureUrl', false);
        // a passkey-gated account answers once the phone asked for the passkey (passkey.ts)
        return new Promise((resolve, reject) => {
          const pending = (passkey: PasskeyLinkView) => resolve({ phone: normalizePhone(phone), passkey });
          const linked =
            b.pairingCode !== undefined
              ? sim.linkWithPairingCode(
                  { pairingCode: str(b, 'pairingCode')!, phone, name, pictureUrl },
                  pending,
                )
              : sim.linkWithQr({ qr: str(b, 'qr')!, phone, name, pictureUrl }, pending);
          linked.then(resolve, reject);
        });
      },
    ],
    ['POST', /^\/phone\/unlink$/, (b) => ({ removed: sim.unlink(str(b, 'phone')!, num(b, 'deviceId')) })],
    ['GET', /^\/inbox\/([^/]+)$/, (_b, [phone]) => ({ messages: sim.inbox(phone!) })],
    [
      'DELETE',
      /^\/inbox\/([^/]+)$/,
      (_b, [phone]) => {
        sim.clearInbox(phone!);
        return { ok: true };
      },
    ],
    ['GET', /^\/presence\/([^/]+)$/, (_b, [phone]) => ({ updates: sim.presence(phone!) })],
    [
      'POST',
      /^\/contacts\/([^/]+)\/revise$/,
      (b, [from]) =>
        sim.reviseInbound(from!, str(b, 'to')!, str(b, 'id')!, str(b, 'text', false), secretOf(b)),
    ],
    ['GET', /^\/undecryptable\/([^/]+)$/, (_b, [phone]) => ({ messages: sim.undecryptable(phone!) })],
    ['GET', /^\/devices\/([^/]+)$/, (_b, [phone]) => ({ devices: sim.devices(phone!) })],
    [
      'POST',
      /^\/contacts$/,
      (b) => {
        // `username` and `usernamePin` (usernames.ts): checked before the contact is written.
        const names = usernameInputOf(sim, b);
        const view = sim.upsertContact({
          phone: str(b, 'phone')!,
          name: str(b, 'name', false),
          pictureUrl: b.pictureUrl === null ? null : str(b, 'pictureUrl', false),
          onWhatsApp: b.onWhatsApp === undefined ? undefined : b.onWhatsApp !== false,
          receipts: str(b, 'receipts', false) as ContactInput['receipts'],
          addressing: str(b, 'addressing', false) as ContactInput['addressing'],
          hidePhone: bool(b, 'hidePhone'),
        });
        return withUsername(sim, view, names);
      },
    ],
    ['POST', /^\/contacts\/([^/]+)\/number$/, (b, [phone]) => sim.changeNumber(phone!, str(b, 'phone')!)],
    [
      'POST',
      /^\/contacts\/([^/]+)\/lid-mapping$/,
      (b, [phone]) => sim.notifyLidMapping(phone!, str(b, 'to')!),
    ],
    [
      'POST',
      /^\/contacts\/([^/]+)\/send$/,
      (b, [from]) => {
        const attachment = b.attachment;
        if (
          attachment !== undefined &&
          (typeof attachment !== 'object' || !attachment || Array.isArray(attachment))
        )
          throw new SimError('attachment must be an object', 400);
        return sim.sendInbound(from!, str(b, 'to')!, {
          text: str(b, 'text', false),
          attachment: attachment as InboundAttachment | undefined,
          quotedId: str(b, 'quotedId', false),
          ...kindInputOf(b),
        });
      },
    ],
    ['POST', /^\/faults\/drop$/, (b) => ({ dropped: sim.drop(str(b, 'phone', false)) })],
    [
      'POST',
      /^\/faults\/early-success$/,
      (b) => {
        sim.faults.earlySuccess({ count: num(b, 'count') });
        return { ok: true };
      },
    ],
    [
      'POST',
      /^\/faults\/refuse-login$/,
      (b) => {
        sim.faults.refuseLogin({
          phone: str(b, 'phone', false),
          reason: num(b, 'reason'),
          count: num(b, 'count'),
        });
        return { ok: true };
      },
    ],
    [
      'POST',
      /^\/faults\/ack-error$/,
      (b) => {
        sim.faults.ackError({
          phone: str(b, 'phone', false),
          to: str(b, 'to', false),
          error: num(b, 'error'),
          count: num(b, 'count'),
        });
        return { ok: true };
      },
    ],
    [
      'POST',
      /^\/faults\/stall$/,
      (b) => {
        sim.faults.stall({
          phone: str(b, 'phone', false),
          xmlns: str(b, 'xmlns', false),
          tag: str(b, 'tag', false),
          ms: num(b, 'ms'),
          count: num(b, 'count'),
        });
        return { ok: true };
      },
    ],
    [
      'POST',
      /^\/faults\/undecryptable$/,
      (b) => {
        sim.failDecrypt({
          phone: str(b, 'phone', false),
          mode: str(b, 'mode', false) as UndecryptableFault['mode'],
          count: b.count === null ? null : num(b, 'count'),
          delayMs: num(b, 'delayMs'),
        });
        return { ok: true };
      },
    ],
    [
      'POST',
      /^\/faults\/restrict$/,
      (b) =>
        sim.restrict({
          phone: str(b, 'phone')!,
          until: typeof b.until === 'number' ? b.until : str(b, 'until', false),
          durationMs: num(b, 'durationMs'),
          reason: str(b, 'reason', false),
        }),
    ],
    [
      'POST',
      /^\/faults\/new-chat-cap$/,
      (b) => {
        if (b.newChatCap === undefined) throw new SimError('newChatCap is required (a number or null)', 400);
        const phone = str(b, 'phone', false);
        sim.setNewChatCap(phone, b.newChatCap === null ? null : num(b, 'newChatCap')!);
        return phone ? sim.restrictions(phone) : { ok: true };
      },
    ],
    ['GET', /^\/accounts\/([^/]+)\/restrictions$/, (_b, [phone]) => sim.restrictions(phone!)],
    ['GET', /^\/accounts\/([^/]+)\/contact-lookups$/, (_b, [phone]) => sim.contactLookupsOf(phone!)],
    [
      'DELETE',
      /^\/faults$/,
      () => {
        sim.clearFaults();
        return { ok: true };
      },
    ],
    ['GET', /^\/media$/, () => sim.media.stats()],
    ['GET', /^\/connections\/opened$/, () => ({ times: sim.socketOpens })],
    ['GET', /^\/config$/, () => ({ ...sim.config })],
    ['GET', /^\/forms$/, () => sim.forms.view()],
    ['POST', /^\/forms$/, (b) => sim.forms.set(b)],
    ['PUT', /^\/config$/, (b) => sim.setConfig(b as Partial<typeof sim.config>)],
    ...groupRoutes(sim),
    ...accountRoutes(sim),
    ...companionRoutes(sim),
    ...statusRoutes(sim),
    ...newsletterRoutes(sim),
    ...callRoutes(sim),
    ...groupPrivacyRoutes(sim),
    ...readReceiptRoutes(sim),
    ...appStateRoutes(sim),
    ...historyRoutes(sim),
    ...usernameRoutes(sim),
    ...firstContactRoutes(sim),
    ...passkeyRoutes(sim),
  ];

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    try {
      const path = new URL(req.url ?? '/', 'http://sim').pathname;
      const sameMethod = routes.filter(([, re]) => re.test(path));
      const route = sameMethod.find(([method]) => method === req.method);
      if (!route) {
        send(sameMethod.length ? 405 : 404, {
          error: sameMethod.length ? 'method not allowed' : `no route ${req.method} ${path}`,
        });
        return;
      }
      const params = (route[1].exec(path) ?? []).slice(1).map((p) => decodeURIComponent(p));
      const body = req.method === 'GET' || req.method === 'DELETE' ? {} : await readBody(req);
      send(200, await route[2](body, params));
    } catch (err) {
      if (err instanceof SimError) send(err.status, { error: err.message });
      else send(500, { error: (err as Error).message ?? 'internal error' });
    }
  };
}

/** The message kind fields of a `/contacts/:phone/send` body (checked by checkKindInput). */
/** A revise's `secret: true` (an edit sent secret-encrypted) and `origSender` (`phone` / `lid`). */
function secretOf(b: Body): { origSender?: SecretOrigSender } | undefined {
  if (!bool(b, 'secret')) return undefined;
  const origSender = str(b, 'origSender', false);
  if (origSender !== undefined && origSender !== 'phone' && origSender !== 'lid')
    throw new SimError('origSender must be "phone" or "lid"', 400);
  return origSender ? { origSender } : {};
}

function kindInputOf(b: Body): InboundKindInput {
  const out: Record<string, unknown> = {};
  for (const key of ['reaction', 'location', 'contacts', 'pollVote'] as const)
    if (b[key] !== undefined) out[key] = b[key];
  return out as InboundKindInput;
}
