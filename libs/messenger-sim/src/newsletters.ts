/**
 * Channels (newsletters) of the simulated network, as Baileys rc14 manages them: `w:mex` GraphQL
 * queries by persisted id (lib/Socket/newsletter.js) — create, metadata (by invite code or JID),
 * update (name, description, picture), follow, unfollow, delete. Only the owner may update or
 * delete; a deleted channel is gone for everyone. Posts to followers: newsletter-api.ts.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { QueryIds, XWAPaths, type proto } from '@whiskeysockets/baileys';
import { SimError } from './sim-error.js';

/**
 * A post of a channel, as the network keeps it. Posting, edits and reactions are newsletter-posts.ts's;
 * the type lives here, beside the channel, as newsletter-posts.ts imports this module.
 */
export interface SimPost {
  /** The stanza id the owner's device gave it (or the control API's). */
  id: string;
  serverId: string;
  t: number;
  message: proto.IMessage;
  edited?: true;
  deleted?: true;
  /** Each follower's reaction (emoji). */
  reactions: Map<string, string>;
  viewers: Set<string>;
}

export interface SimNewsletter {
  /** `<digits>@newsletter`. */
  id: string;
  name: string;
  description: string;
  /** The picture as the owner gave it (base64), empty when none. */
  picture: string;
  owner: string;
  followers: Set<string>;
  invite: string;
  createdAt: number;
  /** How many posts it has had (a post's `server_id` counts on from it). */
  posts?: number;
  /** Its posts, oldest first (newsletter-posts.ts). */
  postLog?: SimPost[];
}

/** How many channels the simulator keeps (the oldest leave first). */
const MAX_NEWSLETTERS = 1000;
const MAX_NAME = 100;
const MAX_DESCRIPTION = 2048;

type Vars = Record<string, unknown>;

export class SimNewsletters {
  private readonly byId = new Map<string, SimNewsletter>();

  create(owner: string, name: unknown, description: unknown): SimNewsletter {
    if (typeof name !== 'string' || !name.trim() || name.length > MAX_NAME)
      throw new SimError(`name is required (1-${MAX_NAME} characters)`, 400);
    if (description != null && (typeof description !== 'string' || description.length > MAX_DESCRIPTION))
      throw new SimError(`description is at most ${MAX_DESCRIPTION} characters`, 400);
    const id = `120363${String(randomInt(0, 1e9)).padStart(9, '0')}${String(randomInt(0, 1e3)).padStart(3, '0')}@newsletter`;
    const newsletter: SimNewsletter = {
      id,
      name: name.trim(),
      description: typeof description === 'string' ? description : '',
      picture: '',
      owner,
      followers: new Set(),
      invite: randomBytes(12).toString('base64url'),
      createdAt: Math.floor(Date.now() / 1000),
    };
    this.byId.set(id, newsletter);
    if (this.byId.size > MAX_NEWSLETTERS) this.byId.delete(this.byId.keys().next().value!);
    return newsletter;
  }

  /** By JID, or by invite code (the last part of `https://whatsapp.com/channel/<code>`). */
  find(key: string, type: 'JID' | 'INVITE'): SimNewsletter | undefined {
    if (type === 'JID') return this.byId.get(key);
    return [...this.byId.values()].find((n) => n.invite === key);
  }

  require(id: unknown): SimNewsletter {
    const found = typeof id === 'string' ? this.byId.get(id) : undefined;
    if (!found) throw new SimError('channel not found', 404);
    return found;
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  /** The channels `phone` owns or follows. */
  of(phone: string): SimNewsletter[] {
    return [...this.byId.values()].filter((n) => n.owner === phone || n.followers.has(phone));
  }
}

/** A channel's GraphQL shape as the viewer `phone` sees it (Baileys parses thread_metadata). */
export function newsletterView(n: SimNewsletter, phone: string) {
  return {
    id: n.id,
    state: { type: 'ACTIVE' },
    thread_metadata: {
      name: { text: n.name },
      description: { text: n.description },
      creation_time: String(n.createdAt),
      invite: n.invite,
      subscribers_count: String(n.followers.size),
      verification: 'UNVERIFIED',
      picture: { id: n.picture ? n.id : '', direct_path: n.picture ? `/v/newsletter/${n.id}` : '' },
    },
    viewer_metadata: {
      mute: 'OFF',
      role: n.owner === phone ? 'OWNER' : n.followers.has(phone) ? 'SUBSCRIBER' : 'GUEST',
    },
  };
}

/**
 * Answers a newsletter `w:mex` query of the account `phone`: the GraphQL `data` body, or
 * undefined when `queryId` is no newsletter query. A refusal throws a SimError (its status is the
 * GraphQL error code Baileys throws as a Boom).
 */
export function newsletterMex(
  newsletters: SimNewsletters,
  phone: string,
  queryId: string | undefined,
  variables: Vars,
): Record<string, unknown> | undefined {
  const owned = (id: unknown) => {
    const n = newsletters.require(id);
    if (n.owner !== phone) throw new SimError('only the owner may change this channel', 403);
    return n;
  };
  switch (queryId) {
    case QueryIds.CREATE: {
      const input = (variables.input ?? {}) as Vars;
      const n = newsletters.create(phone, input.name, input.description);
      return { [XWAPaths.xwa2_newsletter_create]: newsletterView(n, phone) };
    }
    case QueryIds.METADATA: {
      const input = (variables.input ?? {}) as Vars;
      const type = input.type === 'INVITE' ? 'INVITE' : 'JID';
      const n = typeof input.key === 'string' ? newsletters.find(input.key, type) : undefined;
      if (!n) throw new SimError('channel not found', 404);
      return { [XWAPaths.xwa2_newsletter_metadata]: newsletterView(n, phone) };
    }
    case QueryIds.UPDATE_METADATA: {
      const n = owned(variables.newsletter_id);
      const updates = (variables.updates ?? {}) as Vars;
      if (updates.name !== undefined) {
        if (typeof updates.name !== 'string' || !updates.name.trim() || updates.name.length > MAX_NAME)
          throw new SimError('name must be 1-100 characters', 400);
        n.name = updates.name.trim();
      }
      if (updates.description !== undefined)
        n.description = String(updates.description).slice(0, MAX_DESCRIPTION);
      if (updates.picture !== undefined) n.picture = String(updates.picture);
      return { xwa2_newsletter_update: newsletterView(n, phone) };
    }
    case QueryIds.FOLLOW: {
      const n = newsletters.require(variables.newsletter_id);
      if (n.owner !== phone) n.followers.add(phone);
      return { [XWAPaths.xwa2_newsletter_join_v2]: { id: n.id } };
    }
    case QueryIds.UNFOLLOW: {
      const n = newsletters.require(variables.newsletter_id);
      n.followers.delete(phone);
      return { [XWAPaths.xwa2_newsletter_leave_v2]: { id: n.id } };
    }
    case QueryIds.DELETE: {
      const n = owned(variables.newsletter_id);
      newsletters.delete(n.id);
      return { [XWAPaths.xwa2_newsletter_delete_v2]: { id: n.id } };
    }
    default:
      return undefined;
  }
}
