import { changeBlock, profileOf, profileView, type AccountProfileContext } from './account-profile.js';
import { driveContactPresence, onlineOf } from './presence-subscriptions.js';
import { SimError } from './sim-error.js';

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const optionalText = (b: Body, key: string): string | undefined => {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new SimError(`${key} must be a string`, 400);
  return v;
};

const BUSINESS_FIELDS = ['description', 'category', 'email', 'website', 'address'] as const;

/**
 * The control API's account routes: an account's profile as WhatsApp holds it (name, about,
 * photo, blocklist), a contact's about / business profile / last-seen privacy, a contact's
 * presence and chat states, and the phone blocking or unblocking someone.
 */
export function accountRoutes(sim: AccountProfileContext): Array<[string, RegExp, Handler]> {
  const user = (phone: string) => {
    const found = sim.directory.get(phone);
    if (!found) throw new SimError(`unknown phone ${phone}`, 404);
    return found;
  };
  return [
    [
      'GET',
      /^\/accounts\/([^/]+)\/profile$/,
      (_b, [phone]) => {
        const account = user(phone!);
        return { ...profileView(account), online: onlineOf(sim, account).available };
      },
    ],
    [
      'POST',
      /^\/contacts\/([^/]+)\/profile$/,
      (b, [phone]) => {
        const contact = sim.directory.lookupOrCreate(phone!);
        if (!contact) throw new SimError(`${phone} is not on WhatsApp`, 404);
        const state = profileOf(contact);
        const about = optionalText(b, 'about');
        if (about !== undefined) {
          state.about = about || undefined;
          state.aboutSetAt = Date.now();
        }
        if (b.business === null) state.business = undefined;
        else if (b.business !== undefined) {
          if (typeof b.business !== 'object' || Array.isArray(b.business))
            throw new SimError('business must be an object or null', 400);
          const business: Record<string, string> = {};
          for (const key of BUSINESS_FIELDS) {
            const v = optionalText(b.business as Body, key);
            if (v !== undefined) business[key] = v;
          }
          state.business = business;
        }
        if (b.shareLastSeen !== undefined) {
          if (typeof b.shareLastSeen !== 'boolean')
            throw new SimError('shareLastSeen must be true or false', 400);
          state.shareLastSeen = b.shareLastSeen;
        }
        sim.changes++;
        return profileView(contact);
      },
    ],
    [
      'POST',
      /^\/contacts\/([^/]+)\/presence$/,
      (b, [phone]) =>
        driveContactPresence(sim, {
          phone: phone!,
          presence: optionalText(b, 'presence') ?? '',
          to: optionalText(b, 'to'),
          groupId: optionalText(b, 'groupId'),
          ...(typeof b.shareLastSeen === 'boolean' ? { shareLastSeen: b.shareLastSeen } : {}),
        }),
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/blocklist$/,
      (b, [phone]) => {
        const account = user(phone!);
        const action = optionalText(b, 'action') ?? 'block';
        if (action !== 'block' && action !== 'unblock')
          throw new SimError('action must be block or unblock', 400);
        const contact = sim.directory.lookupOrCreate(optionalText(b, 'contact') ?? '');
        if (!contact) throw new SimError('contact is required (a number on WhatsApp)', 400);
        return { changed: changeBlock(sim, account, contact, action), ...profileView(account) };
      },
    ],
  ];
}
