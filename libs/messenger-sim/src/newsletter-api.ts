import { proto } from '@whiskeysockets/baileys';
import {
  addPost,
  deliverToFollowers,
  postControlView,
  postsOf,
  requirePost,
  type NewsletterPostsContext,
} from './newsletter-posts.js';
import type { SimNewsletter } from './newsletters.js';
import { SimError } from './sim-error.js';
import { newStanzaId } from './stanza.js';

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

/** A channel as the control API shows it (its followers as phone numbers). */
export function newsletterControlView(n: SimNewsletter) {
  return {
    id: n.id,
    name: n.name,
    description: n.description,
    owner: n.owner,
    invite: n.invite,
    followers: [...n.followers],
    hasPicture: n.picture !== '',
  };
}

/**
 * The control API's channel routes: a contact creating a channel (so a test account can follow
 * someone else's), its owner posting to it, a channel and its posts as the network knows them,
 * and followers viewing and reacting to a post.
 */
export function newsletterRoutes(sim: NewsletterPostsContext): Array<[string, RegExp, Handler]> {
  return [
    [
      'POST',
      /^\/newsletters$/,
      (b) => {
        if (typeof b.owner !== 'string' && typeof b.owner !== 'number')
          throw new SimError('owner (a phone number) is required', 400);
        return newsletterControlView(sim.newsletters.create(String(b.owner), b.name, b.description));
      },
    ],
    [
      'POST',
      /^\/newsletters\/([^/]+)\/posts$/,
      (b, [id]) => postToFollowers(sim, sim.newsletters.require(decodeURIComponent(id!)), b.text),
    ],
    [
      'GET',
      /^\/newsletters\/([^/]+)\/posts$/,
      (_b, [id]) => ({
        posts: postsOf(sim.newsletters.require(decodeURIComponent(id!))).map(postControlView),
      }),
    ],
    [
      'POST',
      /^\/newsletters\/([^/]+)\/posts\/(\d+)\/views$/,
      (b, [id, serverId]) => viewPost(sim.newsletters.require(decodeURIComponent(id!)), serverId!, b.viewers),
    ],
    [
      'POST',
      /^\/newsletters\/([^/]+)\/posts\/(\d+)\/reactions$/,
      (b, [id, serverId]) =>
        reactToPost(sim.newsletters.require(decodeURIComponent(id!)), serverId!, b.phone, b.code),
    ],
    [
      'GET',
      /^\/newsletters\/([^/]+)$/,
      (_b, [id]) => newsletterControlView(sim.newsletters.require(decodeURIComponent(id!))),
    ],
  ];
}

/**
 * The owner posts a text to the channel (from outside any linked device): each follower's linked
 * devices get it as WhatsApp sends a channel's posts (newsletter-posts.ts). Returns the post's ids.
 */
function postToFollowers(sim: NewsletterPostsContext, n: SimNewsletter, text: unknown) {
  if (typeof text !== 'string' || !text) throw new SimError('text is required', 400);
  const message: proto.IMessage = { conversation: text };
  const post = addPost(n, newStanzaId(), message);
  const delivered = deliverToFollowers(sim, n, post, message);
  return { id: post.id, serverId: post.serverId, delivered };
}

/** Followers viewing a post (each counted once) and reacting to it (one emoji each; empty: none). */
function viewPost(n: SimNewsletter, serverId: string, viewers: unknown) {
  const post = requirePost(n, serverId);
  if (!Array.isArray(viewers) || viewers.some((v) => typeof v !== 'string'))
    throw new SimError('viewers must list phones', 400);
  for (const phone of viewers as string[]) post.viewers.add(phone);
  return postControlView(post);
}

function reactToPost(n: SimNewsletter, serverId: string, phone: unknown, code: unknown) {
  const post = requirePost(n, serverId);
  if (typeof phone !== 'string') throw new SimError('phone is required', 400);
  if (typeof code === 'string' && code) post.reactions.set(phone, code);
  else post.reactions.delete(phone);
  return postControlView(post);
}
