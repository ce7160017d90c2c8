/**
 * The control API's app-state routes (app-state.ts): the phone shares its app-state key with the
 * linked devices, creates or edits a label, labels a chat; and what the account's app state holds
 * now, as the phone decoded it (patches from the devices included).
 */
import { chatModificationToAppPatch, type ChatModification } from '@whiskeysockets/baileys';
import type { SimAppState } from './app-state.js';
import type { DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';

/** What the app-state routes need of the simulator. */
export interface AppStateApiContext extends DirectoryContext {
  readonly appState: SimAppState;
}

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const LABEL_ID = /^[0-9]{1,10}$/;
const CHAT = /^[0-9]{5,24}@(s\.whatsapp\.net|g\.us|lid)$/;

export function appStateRoutes(sim: AppStateApiContext): Array<[string, RegExp, Handler]> {
  const account = (phone: string) => {
    const user = sim.directory.get(phone);
    if (!user) throw new SimError(`unknown account ${phone}`, 404);
    return user;
  };
  return [
    [
      'POST',
      /^\/accounts\/([^/]+)\/app-state\/key-share$/,
      async (_b, [phone]) => ({ devices: await sim.appState.shareKey(account(phone!)) }),
    ],
    ['GET', /^\/accounts\/([^/]+)\/app-state$/, (_b, [phone]) => sim.appState.view(account(phone!))],
    [
      'POST',
      /^\/accounts\/([^/]+)\/labels$/,
      async (b, [phone]) => {
        const id = String(b.id ?? '');
        if (!LABEL_ID.test(id)) throw new SimError('id must be digits', 400);
        if (typeof b.name !== 'string' || !b.name.trim() || b.name.length > 100)
          throw new SimError('name is required (1-100 characters)', 400);
        const color = b.color === undefined ? 0 : Number(b.color);
        if (!Number.isInteger(color) || color < 0 || color > 19)
          throw new SimError('color must be 0-19', 400);
        const patch = chatModificationToAppPatch(
          { addLabel: { id, name: b.name, color, deleted: b.deleted === true } },
          '',
        );
        return { version: await sim.appState.phonePatch(account(phone!), patch) };
      },
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/chat-labels$/,
      async (b, [phone]) => {
        const labelId = String(b.labelId ?? '');
        const chat = String(b.chat ?? '');
        if (!LABEL_ID.test(labelId)) throw new SimError('labelId must be digits', 400);
        if (!CHAT.test(chat)) throw new SimError('chat must be a JID', 400);
        const mod = b.labeled === false ? { removeChatLabel: { labelId } } : { addChatLabel: { labelId } };
        const patch = chatModificationToAppPatch(mod, chat);
        return { version: await sim.appState.phonePatch(account(phone!), patch) };
      },
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/chat-state$/,
      async (b, [phone]) => {
        const chat = String(b.chat ?? '');
        if (!CHAT.test(chat)) throw new SimError('chat must be a JID', 400);
        const user = account(phone!);
        // One patch per field given, as the phone makes them (archive and pin in `regular_low`,
        // mute in `regular_high`).
        const mods: ChatModification[] = [];
        if (typeof b.archived === 'boolean') mods.push({ archive: b.archived, lastMessages: [] });
        if (typeof b.pinned === 'boolean') mods.push({ pin: b.pinned });
        if (b.mutedUntil === null || typeof b.mutedUntil === 'number')
          mods.push({ mute: b.mutedUntil === null ? null : b.mutedUntil });
        if (mods.length === 0) throw new SimError('give archived, pinned or mutedUntil', 400);
        let version = 0;
        for (const mod of mods)
          version = await sim.appState.phonePatch(user, chatModificationToAppPatch(mod, chat));
        return { version };
      },
    ],
  ];
}
